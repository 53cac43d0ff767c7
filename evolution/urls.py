from django.urls import path

from . import views
from .benchevolver import views as benchevolver_views
from .benchevolver import views_analytics
from .benchevolver.analytics.reviews import ReviewAggregates
from .views import assets as views_assets
from .views import measurement as views_measurement

app_name = "evolution"


def patterns(*, reviews: ReviewAggregates | None = None) -> list:
    """The evolution URLs; ``reviews`` is where the review-based charts read review aggregates
    (None: nothing reviewed). The project's URLconf passes review's (``benchapp/urls.py``):
    the engine never imports review."""
    with_reviews = {"reviews": reviews}
    return [
        path("problems/", views.problem_list, name="problem_list"),
        path("problems/<str:public_id>/", views.problem_detail, name="problem_detail"),
        path(
            "problems/<str:public_id>/measure/",
            views_measurement.measure_problem,
            name="measure_problem",
        ),
        path("problem-sets/<int:pk>/measure/", views_measurement.measure_set, name="measure_set"),
        path(
            "measurements/<int:pk>/", views_measurement.measurement_batch, name="measurement_batch"
        ),
        path(
            "measurement/<int:pk>/retry/",
            views_measurement.measurement_retry,
            name="measurement_retry",
        ),
        path("campaigns/", views.campaign_list, name="campaign_list"),
        path("campaigns/new/", benchevolver_views.campaign_new, name="campaign_new"),
        path("campaigns/<int:pk>/", benchevolver_views.campaign_detail, name="campaign_detail"),
        # BenchEvolver's analytics (benchevolver/views_analytics): before campaign_control, whose <str:action>/ would match them.
        path(
            "campaigns/<int:pk>/heatmap/", views_analytics.campaign_heatmap, name="campaign_heatmap"
        ),
        path(
            "campaigns/<int:pk>/heatmap.json",
            views_analytics.campaign_heatmap_json,
            name="campaign_heatmap_json",
        ),
        path(
            "campaigns/<int:pk>/heatmap.csv",
            views_analytics.campaign_heatmap_csv,
            name="campaign_heatmap_csv",
        ),
        path(
            "campaigns/<int:pk>/analytics/",
            views_analytics.campaign_analytics,
            with_reviews,
            name="campaign_analytics",
        ),
        path(
            "campaigns/<int:pk>/analytics/<slug:chart>.json",
            views_analytics.campaign_chart_json,
            with_reviews,
            name="campaign_chart_json",
        ),
        path(
            "campaigns/<int:pk>/analytics/<slug:chart>.csv",
            views_analytics.campaign_chart_csv,
            with_reviews,
            name="campaign_chart_csv",
        ),
        # The cartesian bundle first: its name would also match the whole bundle's pattern.
        path(
            "assets/plotly-cartesian-<str:version>.min.js",
            views_assets.plotly_cartesian_js,
            name="plotly_cartesian_js",
        ),
        path("assets/plotly-<str:version>.min.js", views_assets.plotly_js, name="plotly_js"),
        path("campaigns/<int:pk>/<str:action>/", views.campaign_control, name="campaign_control"),
        path("lineages/<int:pk>/", benchevolver_views.lineage_detail, name="lineage_detail"),
        path("candidates/<int:pk>/", benchevolver_views.candidate_detail, name="candidate_detail"),
    ]


# For anything including this module as it is: the charts then show nothing reviewed.
urlpatterns = patterns()
