import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _empty_cache():
    """Chart data is cached per process; every test starts from a cold cache."""
    cache.clear()
    yield
    cache.clear()
