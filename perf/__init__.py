"""The performance machinery, in one place: each piece is a plain function the domain code calls by name, and
docs/performance.md says what each buys (figures from `make bench`) and what it costs a reader. It imports Django
and no app: the lowest layer."""
