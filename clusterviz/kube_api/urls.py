"""Routes of the Kubernetes API under /k8s/<slug>/: one view resolves every path itself, so an unknown
path is a JSON Status (never an APPEND_SLASH redirect or an HTML 404)."""

from django.urls import re_path

from .views import endpoint

urlpatterns = [re_path(r"^(?P<path>.*)$", endpoint, name="kube-api")]
