// A client in another language: Node.js with @grpc/grpc-js and the .proto files alone
// (proto/ and the google.rpc protos vendored in third_party/googleapis/). It creates a
// Bon Appetit! game by its typed kind, reads a seat's typed view (its own hand, the others'
// hidden), has the seat try an illegal bid and decodes the refusal's google.rpc.ErrorInfo,
// then plays a legal bid made from its typed hand, reads the typed facts of the answer and
// the typed rows of a replay, and prints what it saw as JSON.
// Usage: node client.mjs ADDRESS ORGANISER_KEY PROTO_ROOT GOOGLEAPIS_ROOT
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";

const [address, organiserKey, protoRoot, googleapisRoot] = process.argv.slice(2);
const definition = protoLoader.loadSync(
  ["feastlog/v1/game_service.proto", "feastlog/v1/replay_service.proto"],
  { includeDirs: [protoRoot], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true },
);
const feastlog = grpc.loadPackageDefinition(definition).feastlog.v1;
const games = new feastlog.GameService(address, grpc.credentials.createInsecure());
const replays = new feastlog.ReplayService(address, grpc.credentials.createInsecure());

function bearer(token) {
  const metadata = new grpc.Metadata();
  if (token) metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

function call(client, method, request, token) {
  return new Promise((resolve, reject) => {
    client[method](request, bearer(token), (error, reply) => (error ? reject(error) : resolve(reply)));
  });
}

function stream(client, method, request, token) {
  return new Promise((resolve, reject) => {
    const replies = [];
    const call = client[method](request, bearer(token));
    call.on("data", (reply) => replies.push(reply));
    call.on("error", reject);
    call.on("end", () => resolve(replies));
  });
}

// The rich error: google.rpc.Status in the grpc-status-details-bin trailer, holding one
// google.rpc.ErrorInfo (domain "feastlog", reason, metadata such as rule_id).
const rpcTypes = new protobuf.Root();
rpcTypes.resolvePath = (origin, target) => `${googleapisRoot}/${target}`;
rpcTypes.loadSync(["google/rpc/status.proto", "google/rpc/error_details.proto"], { keepCase: true });
const Status = rpcTypes.lookupType("google.rpc.Status");
const ErrorInfo = rpcTypes.lookupType("google.rpc.ErrorInfo");

function errorInfo(error) {
  const raw = error.metadata.get("grpc-status-details-bin")[0];
  const status = Status.decode(raw);
  const detail = status.details.find((d) => d.type_url === "type.googleapis.com/google.rpc.ErrorInfo");
  return ErrorInfo.toObject(ErrorInfo.decode(detail.value));
}

const created = await call(games, "CreateGame", {
  kind: "GAME_KIND_BON_APPETIT", players: ["Ann", "Brian", "Celia"],
}, organiserKey);
const ann = created.seat_tokens[0].token;
const out = { game_id: created.game_id, kind: created.kind, seats: created.seat_tokens.length };

// Ann's table, typed: a TableView whose member is the game's own view message.
const reply = await call(games, "GetView", { game_id: created.game_id }, ann);
const view = reply.typed_view.bon_appetit;
const seats = view.seats;
out.view = {
  member: reply.typed_view.game,
  viewer: reply.typed_viewer,
  phase: view.phase,
  to_act: view.to_act,
  dish: view.dish.name,
  gem_values: view.gem_values,
  own_hand: seats[0].hand.values,
  // a hidden list is an unset StringList: null here, absent from the Struct
  others_hidden: seats.slice(1).map((s) => s.hand === null && s.gem_count > 0),
};

try {
  await call(games, "SubmitCommand", {
    game_id: created.game_id, command_id: "js-1",
    command: { bon_appetit: { bid: { gems: Array(4).fill("BON_APPETIT_GEM_RED") } } },
  }, ann);
  out.illegal = "accepted";
} catch (error) {
  const info = errorInfo(error);
  out.illegal = { code: error.code, details: error.details, domain: info.domain,
                  reason: info.reason, rule_id: info.metadata.rule_id };
}

// A legal bid from the typed hand: its first gem. The server's list must hold it.
const gem = `BON_APPETIT_GEM_${seats[0].hand.values[0].toUpperCase()}`;
const legal = await call(games, "ListLegalCommands", { game_id: created.game_id }, ann);
out.bid = gem;
out.bid_listed = legal.commands.some(
  (c) => c.bon_appetit.bid && c.bon_appetit.bid.gems.length === 1 && c.bon_appetit.bid.gems[0] === gem,
);
const accepted = await call(games, "SubmitCommand", {
  game_id: created.game_id, command_id: "js-2", command: { bon_appetit: { bid: { gems: [gem] } } },
}, ann);
out.accepted_seq = accepted.seq;
out.state_hash = accepted.state_hash;
out.facts = accepted.typed_facts.map((f) => f.bon_appetit.fact);
out.sealed_by = accepted.typed_facts[0].bon_appetit.bid_sealed.seat;

// The record as a spectator replays it: typed actors, facts and views on every row.
const rows = await stream(replays, "StreamReplay", { game_id: created.game_id }, null);
out.replay = rows.map(({ event }) => ({
  seq: event.seq,
  actor: event.typed_actor,
  facts: event.typed_facts.map((f) => f.bon_appetit.fact),
  ann_hand_shown: event.typed_view.bon_appetit.seats[0].hand !== null,
}));
console.log(JSON.stringify(out));
games.close();
replays.close();
