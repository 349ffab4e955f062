"""Clusters: the node pools and nodes API, what a cluster registration may point at, Kubernetes quantities and
name rules (pure), and kube, the only module that talks to Kubernetes."""
