from django.urls import path

from . import views

app_name = "review"
urlpatterns = [
    # reviewer (blinded): only opaque ids appear in these URLs
    path("review/", views.queue, name="queue"),
    path("review/g/<str:opaque_id>/", views.group, name="group"),
    path("review/g/<str:opaque_id>/draft/", views.autosave, name="autosave"),
    path("review/tags/suggest/", views.tag_suggest, name="tag_suggest"),
    # curator
    path("review/rounds/", views.round_list, name="round_list"),
    path("review/rounds/new/", views.round_create, name="round_create"),
    path(
        "review/rounds/new/reasoning/",
        views.round_create_reasoning,
        name="round_create_reasoning",
    ),
    path("review/rounds/<int:pk>/", views.round_detail, name="round_detail"),
    path("review/rounds/<int:pk>/status/", views.round_status, name="round_status"),
    path("review/rounds/<int:pk>/assign/", views.round_reassign, name="round_reassign"),
    path(
        "review/rounds/<int:pk>/export.<str:fmt>",
        views.round_export,
        name="round_export",
    ),
    path(
        "review/adjudications/<int:pk>/resolve/",
        views.adjudication_resolve,
        name="adjudication_resolve",
    ),
    path("review/rounds/<int:pk>/override/", views.score_override, name="score_override"),
    path("review/rounds/<int:pk>/answer/", views.answer_override, name="answer_override"),
    path("review/tags/", views.tag_list, name="tag_list"),
]
