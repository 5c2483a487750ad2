"""The gRPC adapter: the server, its servicers, the guard every call passes, the status
table, the request log, reflection and TLS."""
