"""kubesim's controller manager for its own API server: the control loop, garbage collection, Jobs,
Deployments/ReplicaSets, Knative-style serving and the Kubeflow Training Operator's jobs (kubeflow.py). On a real control plane kube-controller-manager does these
(except Knative serving, which the node side's remote driver runs when the CRD is installed)."""
