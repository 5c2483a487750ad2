// A client in another language: Node.js with @grpc/grpc-js and the .proto files alone.
// It creates a Bon Appetit! game as the organiser, has a seat try an illegal bid (reads the
// rule id from the rich error), then a legal one, and prints what it saw as JSON.
// Usage: node client.mjs ADDRESS ORGANISER_KEY PROTO_ROOT GOOGLEAPIS_ROOT
import fs from "node:fs";
import path from "node:path";
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";

const [address, organiserKey, protoRoot, googleapisRoot] = process.argv.slice(2);
const definition = protoLoader.loadSync("feastlog/v1/game_service.proto", {
  includeDirs: [protoRoot],
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
});
const feastlog = grpc.loadPackageDefinition(definition).feastlog.v1;
const client = new feastlog.GameService(address, grpc.credentials.createInsecure());

function bearer(token) {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

function call(method, request, token) {
  return new Promise((resolve, reject) => {
    client[method](request, bearer(token), (error, reply) => (error ? reject(error) : resolve(reply)));
  });
}

// The rich error: google.rpc.Status in the grpc-status-details-bin trailer, holding one
// google.rpc.ErrorInfo (domain "feastlog", reason, metadata with the rule_id).
const rpcTypes = new protobuf.Root();
rpcTypes.resolvePath = (origin, target) => {
  const local = path.join(googleapisRoot, target);
  return fs.existsSync(local) ? local : protobuf.util.path.resolve(origin, target);
};
rpcTypes.loadSync(["google/rpc/status.proto", "google/rpc/error_details.proto"]);
const Status = rpcTypes.lookupType("google.rpc.Status");
const ErrorInfo = rpcTypes.lookupType("google.rpc.ErrorInfo");

function errorInfo(error) {
  const raw = error.metadata.get("grpc-status-details-bin")[0];
  const status = Status.decode(raw);
  const detail = status.details.find((d) => d.type_url.endsWith("/google.rpc.ErrorInfo"));
  return ErrorInfo.toObject(ErrorInfo.decode(detail.value));
}

const created = await call("CreateGame", { game_kind: "bon-appetit", players: ["Ann", "Brian", "Celia"] }, organiserKey);
const ann = created.seat_tokens[0].token;
const out = { game_id: created.game_id, seats: created.seat_tokens.length };
try {
  await call("SubmitCommand", {
    game_id: created.game_id, command_id: "js-1",
    command: { bon_appetit: { bid: { gems: ["GEM_RED", "GEM_RED", "GEM_RED", "GEM_RED"] } } },
  }, ann);
  out.illegal = "accepted";
} catch (error) {
  const info = errorInfo(error);
  out.illegal = { code: error.code, details: error.details, domain: info.domain,
                  reason: info.reason, rule_id: info.metadata.rule_id };
}
const legal = await call("ListLegalCommands", { game_id: created.game_id }, ann);
const accepted = await call("SubmitCommand", {
  game_id: created.game_id, command_id: "js-2", command: legal.commands[0],
}, ann);
out.accepted_seq = accepted.seq;
out.state_hash = accepted.state_hash;
console.log(JSON.stringify(out));
client.close();
