from django.urls import path

from . import views

app_name = "evolution"
urlpatterns = [
    path("problems/", views.problem_list, name="problem_list"),
    path("problems/<str:public_id>/", views.problem_detail, name="problem_detail"),
    path("campaigns/", views.campaign_list, name="campaign_list"),
    path("campaigns/new/", views.campaign_new, name="campaign_new"),
    path("campaigns/<int:pk>/", views.campaign_detail, name="campaign_detail"),
    path("campaigns/<int:pk>/<str:action>/", views.campaign_control, name="campaign_control"),
    path("lineages/<int:pk>/", views.lineage_detail, name="lineage_detail"),
    path("candidates/<int:pk>/", views.candidate_detail, name="candidate_detail"),
]
