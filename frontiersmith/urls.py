from django.urls import path

from evolution.views import campaign_control

from . import views

app_name = "frontiersmith"
urlpatterns = [
    path("frontiersmith/", views.campaign_list, name="campaign_list"),
    path("frontiersmith/new/", views.campaign_new, name="campaign_new"),
    path("frontiersmith/<int:pk>/", views.campaign_detail, name="campaign_detail"),
    path(
        "frontiersmith/<int:pk>/<str:action>/",
        campaign_control,
        {"kind": "frontiersmith"},
        name="campaign_control",
    ),
    path("frontiersmith/candidates/<int:pk>/", views.candidate_detail, name="candidate_detail"),
]
