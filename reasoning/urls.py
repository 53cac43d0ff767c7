from django.urls import path

from evolution.views import campaign_control

from . import views

app_name = "reasoning"
urlpatterns = [
    path("reasoning/", views.campaign_list, name="campaign_list"),
    path("reasoning/new/", views.campaign_new, name="campaign_new"),
    path("reasoning/series/", views.series_list, name="series_list"),
    path("reasoning/series/<slug:slug>/", views.series_detail, name="series_detail"),
    path("reasoning/series/<slug:slug>/state.json", views.series_state_file, name="series_state"),
    path("reasoning/series/<slug:slug>/runs.jsonl", views.series_runs_file, name="series_runs"),
    path("reasoning/<int:pk>/", views.campaign_detail, name="campaign_detail"),
    path("reasoning/<int:pk>/charts.json", views.campaign_charts, name="campaign_charts"),
    path("reasoning/<int:pk>/items/", views.item_list, name="item_list"),
    path("reasoning/<int:pk>/log.jsonl", views.result_log, name="result_log"),
    path("reasoning/<int:pk>/runs/<int:number>/report.md", views.run_report, name="run_report"),
    path(
        "reasoning/<int:pk>/<str:action>/",
        campaign_control,
        {"kind": "reasoning"},
        name="campaign_control",
    ),
    path("reasoning/items/<int:pk>/", views.item_detail, name="item_detail"),
]
