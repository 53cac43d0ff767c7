from django.urls import path

from evolution.views import campaign_control

from . import views

app_name = "xcoder"
urlpatterns = [
    path("xcoder/", views.campaign_list, name="campaign_list"),
    path("xcoder/new/", views.campaign_new, name="campaign_new"),
    path("xcoder/<int:pk>/", views.campaign_detail, name="campaign_detail"),
    path("xcoder/<int:pk>/tasks/<int:index>/", views.task_detail, name="task_detail"),
    path(
        "xcoder/<int:pk>/<str:action>/",
        campaign_control,
        {"kind": "xcoder"},
        name="campaign_control",
    ),
]
