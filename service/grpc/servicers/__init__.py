"""The gRPC servicers: thin adapters between the API's messages and the application.

Each method converts its request, calls one use case of a feature the application composes
(``service.app.application.Application``: its games, replays, tournaments…) and
converts the answer; errors leave through the one table of ``service.app.errors`` (the
``unary`` and ``streaming`` wrappers), so no method catches anything.  Which class serves
which service, and how each is registered, is the service table's
(``service/grpc/services.py``).

- ``game``: feastlog.v1.GameService (create, join, submit, view, legal, watch, list);
- ``replay``: feastlog.v1.ReplayService (state at a seq, replay streams, export);
- ``audit``: feastlog.v1.AuditService (verify, explain, what-if, refusals, rulings);
- ``tournament``: feastlog.v1.TournamentService (standings, stats, tournaments);
- ``admin``: feastlog.v1.AdminService (named arbiter keys);
- ``proof``: feastlog.v1.ProofService (keys, signed tree heads, proofs, cosignatures);
- ``table``: feastlog.v1.TableService (calls to the arbiter, their queue, case files);
- ``seat_link``: feastlog.v1.SeatLinkService (one-time links to a seat's page);
- ``feed``: feastlog.v1.FeedService (every game's rows in one stream);
- ``convert``: the conversions between plain values and messages;
- ``base``: what every servicer holds (the application, the caller).
"""
