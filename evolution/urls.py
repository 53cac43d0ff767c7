from django.urls import path

from . import views

app_name = "evolution"
urlpatterns = [
    path("problems/", views.problem_list, name="problem_list"),
    path("problems/<str:public_id>/", views.problem_detail, name="problem_detail"),
]
