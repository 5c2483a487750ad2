"""feastlog.v1.ProofService: the server's keys, signed tree heads, proofs, cosignatures."""

from __future__ import annotations

import grpc

from feastlog.replay.proof.signed import Cosignature, TreeHead
from feastlog.service.app.errors import BadRequest
from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.servicers.convert import head_message
from feastlog.service.grpc.status import unary
from feastlog.v1 import proof_pb2
from feastlog.v1 import proof_service_pb2 as pb
from feastlog.v1 import proof_service_pb2_grpc as pb_grpc


class ProofService(Servicer, pb_grpc.ProofServiceServicer):
    """Proof beyond the operator: anyone may ask."""

    @unary
    async def GetServerInfo(
        self, request: pb.GetServerInfoRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetServerInfoResponse:
        info = await self.app.proving.server_info(self.caller(context))
        keys = [pb.ServerKey(public_key=k, first_used=t) for k, t in info.keys]
        return pb.GetServerInfoResponse(
            public_key=info.public_key,
            keys=keys,
            tree_size=info.tree_size,
            head_interval_ms=info.head_interval_ms,
        )

    @unary
    async def GetTreeHead(
        self, request: pb.GetTreeHeadRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetTreeHeadResponse:
        head, cosignatures = await self.app.proving.tree_head(self.caller(context), request.size)
        return pb.GetTreeHeadResponse(
            head=head_message(head),
            cosignatures=[cosignature_message(c) for c in cosignatures],
        )

    @unary
    async def GetInclusionProof(
        self, request: pb.GetInclusionProofRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetInclusionProofResponse:
        found = await self.app.proving.inclusion_proof(
            self.caller(context), request.game_id, request.seq, request.tree_size
        )
        return pb.GetInclusionProofResponse(
            leaf_index=found.leaf_index,
            tree_size=found.tree_size,
            row_hash=found.row_hash,
            leaf_hash=found.leaf_hash.hex(),
            path=[p.hex() for p in found.path],
            root=found.root.hex(),
        )

    @unary
    async def GetConsistencyProof(
        self, request: pb.GetConsistencyProofRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetConsistencyProofResponse:
        found = await self.app.proving.consistency_proof(
            self.caller(context), request.first, request.second
        )
        return pb.GetConsistencyProofResponse(
            first=found.first,
            second=found.second,
            path=[p.hex() for p in found.path],
            first_root=found.first_root.hex(),
            second_root=found.second_root.hex(),
        )

    @unary
    async def AddCosignature(
        self, request: pb.AddCosignatureRequest, context: grpc.aio.ServicerContext
    ) -> pb.AddCosignatureResponse:
        if not request.HasField("head") or not request.HasField("cosignature"):
            raise BadRequest("a cosignature names the head it signs", field="head")
        head = head_of(request.head)
        c = request.cosignature
        cosignature = Cosignature.of(head, c.witness_key, c.witnessed_at)
        signed = Cosignature(**{**vars(cosignature), "signature": c.signature})
        count = await self.app.proving.add_cosignature(self.caller(context), head, signed)
        return pb.AddCosignatureResponse(cosignatures=count)


def head_of(message: proof_pb2.TreeHead) -> TreeHead:
    """A tree head from its message."""
    m = message
    return TreeHead(m.size, m.root, m.signed_at, m.public_key, m.signature)


def cosignature_message(cosignature: Cosignature) -> proof_pb2.Cosignature:
    """A witness's cosignature as its message."""
    c = cosignature
    return proof_pb2.Cosignature(
        witness_key=c.witness_key, witnessed_at=c.witnessed_at, signature=c.signature
    )
