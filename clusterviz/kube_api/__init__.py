"""A Kubernetes-API-compatible endpoint per cluster (`/k8s/<slug>/...`) for the real kubectl."""
