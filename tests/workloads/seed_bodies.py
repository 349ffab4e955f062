"""The seeds' example create bodies (kept with the product, as /api/schema/'s examples: workloads/seed_examples)."""

from workloads.api.seed_examples import INFERENCE_REQUEST, TRAINING_REQUEST, WORKSPACE_REQUEST

__all__ = ["INFERENCE_REQUEST", "TRAINING_REQUEST", "WORKSPACE_REQUEST"]
