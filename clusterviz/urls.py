from django.urls import include, path, re_path
from django.views.i18n import JavaScriptCatalog

from . import capacity_views, classroom, import_views, join_views, profile_views, recording_views, version_views, views
from .kube_api.views import root_endpoint

urlpatterns = [
    # the legacy kubeconfig's form: the owner token in the server path (redacted from every log line)
    # any slug reaches the endpoint, so that even a malformed one is answered with a Status
    path("k8s/<str:slug>/key/<str:key>/", include("clusterviz.kube_api.urls")),
    path("k8s/<str:slug>/", include("clusterviz.kube_api.urls")),
    # kubectl get --raw /version (/livez, /readyz, /openapi/v3…): absolute paths, without the prefix
    re_path(r"^(?P<path>(?:version|livez|readyz|openapi)(?:/.*)?)$", root_endpoint, name="kube-root"),
    path("", views.home, name="clusterviz-home"),
    path("i18n/", include("django.conf.urls.i18n")),  # set_language: the language switch
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),  # gettext() for static/js
    path("favicon.ico", views.favicon, name="clusterviz-favicon"),
    path("join", join_views.join, name="clusterviz-join"),
    path("clusters/new", views.create_cluster, name="clusterviz-create"),
    path("clusters/<slug:slug>/", views.cluster_page, name="clusterviz-cluster"),
    path("clusters/<slug:slug>/fork", classroom.fork, name="clusterviz-fork"),
    path("api/lessons", views.api_lessons, name="clusterviz-lessons"),
    path("api/clusters/<slug:slug>/state", views.api_state, name="clusterviz-state"),
    path("api/clusters/<slug:slug>/requested", views.api_requested, name="clusterviz-requested"),
    path("api/clusters/<slug:slug>/actions", views.api_action, name="clusterviz-action"),
    path("api/clusters/<slug:slug>/export", views.api_export, name="clusterviz-export"),
    path("api/clusters/<slug:slug>/snapshot", views.api_snapshot, name="clusterviz-snapshot"),
    path("api/clusters/<slug:slug>/import", views.api_import, name="clusterviz-import"),
    path("api/clusters/<slug:slug>/imports", import_views.start_import, name="clusterviz-imports"),
    path("api/clusters/<slug:slug>/imports/<int:number>", import_views.import_job, name="clusterviz-import-job"),
    path("api/clusters/<slug:slug>/imports/<int:number>/cancel", import_views.cancel_import),
    path("api/clusters/<slug:slug>/profile", profile_views.api_profile, name="clusterviz-profile"),
    path("api/clusters/<slug:slug>/profile/check", profile_views.api_profile_check),
    path("api/clusters/<slug:slug>/profile.yaml", profile_views.api_profile_yaml, name="clusterviz-profile-yaml"),
    path("api/clusters/<slug:slug>/compare", profile_views.api_compare, name="clusterviz-compare"),
    path("api/clusters/<slug:slug>/version", version_views.api_version, name="clusterviz-version"),
    path("api/clusters/<slug:slug>/capacity", capacity_views.api_capacity, name="clusterviz-capacity"),
    path("api/clusters/<slug:slug>/lesson", views.api_lesson, name="clusterviz-lesson"),
    path("api/clusters/<slug:slug>/recording", recording_views.api_recording, name="clusterviz-recording"),
    path("api/clusters/<slug:slug>/recording/lesson", recording_views.api_recorded_lesson),
    path("api/clusters/<slug:slug>/recording/lesson.yaml", recording_views.api_recorded_lesson_file),
    path("api/clusters/<slug:slug>/prediction", views.api_prediction, name="clusterviz-prediction"),
    path("api/clusters/<slug:slug>/predictions.csv", views.api_predictions, name="clusterviz-predictions"),
    path("api/clusters/<slug:slug>/cycles", classroom.recent_cycles, name="clusterviz-cycles"),
    path("api/clusters/<slug:slug>/cycles/<int:number>", views.api_cycle, name="clusterviz-cycle"),
]
