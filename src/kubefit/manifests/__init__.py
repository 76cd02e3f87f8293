"""Input, one way: bytes → documents (parse) → typed API objects (decode, load) → the expanded scenario
(admission, workloads); also live snapshots, node templates and public traces (importers)."""
