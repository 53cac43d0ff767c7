from django.urls import path

from . import views, views_independent, views_questions
from .living import views as views_living

app_name = "releases"
V = "releases/<slug:slug>/v<str:version>/"
urlpatterns = [
    # public (no login): published releases only
    path("releases/", views.public_list, name="public_list"),
    path(V, views.public_detail, name="public_detail"),
    path(V + "card.md", views.public_card, name="public_card"),
    path(V + "leaderboard/", views.public_leaderboard, name="public_leaderboard"),
    path(V + "items/<str:public_id>/", views.public_item, name="public_item"),
    path(
        V + "questions/leaderboard/",
        views_questions.public_question_leaderboard,
        name="public_question_leaderboard",
    ),
    path("benchmarks/<slug:slug>/living/", views_living.living_page, name="living"),
    # curator
    path(
        "curate/benchmarks/<slug:slug>/panel/",
        views_living.living_panel_add,
        name="living_panel_add",
    ),
    path(
        "curate/benchmarks/<slug:slug>/panel/remove/",
        views_living.living_panel_remove,
        name="living_panel_remove",
    ),
    path(
        "curate/benchmarks/<slug:slug>/remeasure/",
        views_living.living_remeasure,
        name="living_remeasure",
    ),
    path(
        "curate/releases/<int:pk>/calibration/",
        views_living.release_calibration,
        name="release_calibration",
    ),
    path(
        "curate/releases/<int:pk>/calibration/route/",
        views_living.release_calibration_route,
        name="release_calibration_route",
    ),
    path(
        "curate/campaigns/<int:pk>/calibration/",
        views_living.campaign_calibration,
        name="living_calibration_campaign",
    ),
    path(
        "curate/campaigns/<int:pk>/calibration/route/",
        views_living.campaign_calibration_route,
        name="campaign_calibration_route",
    ),
    path(
        "curate/benchmarks/<slug:slug>/releases/<int:pk>/re-evolve/",
        views_living.living_reevolve,
        name="living_reevolve",
    ),
    path(
        "curate/benchmarks/<slug:slug>/re-evolutions/<int:pk>/",
        views_living.living_reevolution_edit,
        name="living_reevolution_edit",
    ),
    path(
        "curate/benchmarks/<slug:slug>/re-evolutions/<int:pk>/discard/",
        views_living.living_reevolution_discard,
        name="living_reevolution_discard",
    ),
    path("curate/releases/", views.curate_list, name="curate_list"),
    path("curate/benchmarks/new/", views.benchmark_new, name="benchmark_new"),
    path("curate/releases/new/", views.release_new, name="release_new"),
    path("curate/releases/<int:pk>/", views.curate_detail, name="curate_detail"),
    path("curate/releases/<int:pk>/rules/", views.release_rules, name="release_rules"),
    path("curate/releases/<int:pk>/gate/", views.release_gate, name="release_gate"),
    path(
        "curate/releases/<int:pk>/independent/",
        views_independent.fragment,
        name="independent_fragment",
    ),
    path(
        "curate/releases/<int:pk>/independent/panel/",
        views_independent.panel_save,
        name="independent_panel",
    ),
    path(
        "curate/releases/<int:pk>/independent/run/",
        views_independent.evaluate,
        name="independent_run",
    ),
    path(
        "curate/evaluations/<int:pk>/gap.csv",
        views_independent.gap_csv,
        name="independent_gap_csv",
    ),
    path("curate/releases/<int:pk>/decide/", views.release_decide, name="release_decide"),
    path("curate/releases/<int:pk>/freeze/", views.release_freeze, name="release_freeze"),
    path(
        "curate/releases/<int:pk>/questions/",
        views.release_questions_add,
        name="release_questions_add",
    ),
    path(
        "curate/releases/<int:pk>/questions/remove/",
        views.release_question_remove,
        name="release_question_remove",
    ),
    path("curate/releases/<int:pk>/publish/", views.release_publish, name="release_publish"),
    path("curate/releases/<int:pk>/next/", views.release_next, name="release_next"),
    path("curate/releases/<int:pk>/errata/", views.release_erratum, name="release_erratum"),
    path("curate/releases/<int:pk>/runs/", views.release_run, name="release_run"),
    path(
        "curate/releases/<int:pk>/question-runs/",
        views_questions.question_run_new,
        name="question_run_new",
    ),
    path("curate/releases/<int:pk>/upload/", views.release_upload, name="release_upload"),
    path("curate/releases/<int:pk>/export/<str:fmt>/", views.release_export, name="release_export"),
    path("curate/runs/<int:pk>/", views.run_detail, name="run_detail"),
    path(
        "curate/jobs/<slug:kind>/<int:pk>/run-again/",
        views.job_run_again,
        name="job_run_again",
    ),
]
