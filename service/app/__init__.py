"""The application: the use cases (create, join, submit, rule, the reads, a season's bulk
work), the live games they fold, who is calling, and the errors they raise, in words:
no gRPC, no driver (``docs/architecture.md``)."""
