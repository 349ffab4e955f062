"""The loop with the cluster: push (create or adopt, suspend, resume, remove), the sync round and its writes,
phases and pending reasons (pure), endpoints, replicas, metric collection, reclaim, round locks and the
beat lease."""
