"""The evolution app's URLconf included on its own, as a site without the review app would
include it: nothing here says where review aggregates come from."""

from django.urls import include, path

urlpatterns = [path("", include("evolution.urls"))]
