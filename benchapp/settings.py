"""BenchForge settings: every value comes from the environment (see docs/configuration.md)."""

from __future__ import annotations

import importlib.util
from datetime import timedelta
from pathlib import Path

from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from evolution.sandbox import config as sandbox_config

from .env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_networks,
    env_str,
    parse_database_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent
# In a source checkout local state lives next to manage.py; an installed copy (no manage.py
# beside the packages) keeps it in ./var of the directory it is started from.
_DEFAULT_DATA_DIR = BASE_DIR / "var" if (BASE_DIR / "manage.py").exists() else Path.cwd() / "var"
DATA_DIR = Path(env_str("BENCHFORGE_DATA_DIR", str(_DEFAULT_DATA_DIR)))


def _project_dir(name: str, package: str) -> Path:
    """The project-wide ``templates/`` or ``static/``: the checkout's own at its top, or the copy
    an installed wheel carries as ``package`` (pyproject.toml maps the one onto the other)."""
    if (BASE_DIR / "manage.py").exists():
        return BASE_DIR / name
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ImproperlyConfigured(f"the installed copy lacks {package} (the project's {name}/)")
    return Path(next(iter(spec.submodule_search_locations)))


TEMPLATES_DIR = _project_dir("templates", "benchforge_templates")
STATIC_DIR = _project_dir("static", "benchforge_static")

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "insecure-development-key-only-for-debug"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "ninja",
    "axes",
    "csp",
    "accounts",
    "benchapp",
    "evolution",
    "evolution.benchevolver",
    "evolution.measurement",
    "evolution.screening",
    "review",
    "releases",
    "reasoning",
    "frontiersmith",
    "evosyn",
    "xcoder",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "benchapp.middleware.RejectNulMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "benchapp.middleware.AdminRefusalMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "benchapp.session_guard.HtmxSessionMiddleware",
    # Last, as django-axes requires: it turns a locked-out login into the lockout answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "benchapp.urls"
WSGI_APPLICATION = "benchapp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [TEMPLATES_DIR],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.roles.roles_context",
            ],
        },
    }
]

DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{DATA_DIR / 'benchforge.sqlite3'}")
DATABASES = {"default": parse_database_url("DATABASE_URL", DATABASE_URL)}
# Several test runs may share one PostgreSQL server; each can name its own test database.
if env_str("DATABASE_TEST_NAME"):
    DATABASES["default"]["TEST"] = {"NAME": env_str("DATABASE_TEST_NAME")}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# --- Login throttling (django-axes) ----------------------------------------
# Every password check (app login, admin login, API token issuance) goes through the axes
# backend first: once a username, or a client address, has LOGIN_FAILURE_LIMIT failures, further
# attempts are refused for LOGIN_COOLOFF_MINUTES before any password is hashed.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "benchapp.auth.ProgressiveDelayBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_float("LOGIN_COOLOFF_MINUTES", 15.0, minimum=0.1))
# Two independent counters: one per username (guessing one account from many addresses) and
# one per address (one client guessing many accounts).
# A lock per (username, address) pair: a guesser locks only itself (benchapp/auth.py).
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# Past the limit, failures for one username (any address) or from one address (any username)
# delay further tries 1, 2, 4 … seconds, at most this many; known addresses are never delayed.
LOGIN_MAX_DELAY_SECONDS = env_float("LOGIN_MAX_DELAY_SECONDS", 60.0, minimum=1.0)
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "benchapp.auth.lockout_response"
AXES_CLIENT_IP_CALLABLE = "benchapp.auth.client_ip"
AXES_VERBOSE = False
# Number of reverse proxies in front of the app that append to X-Forwarded-For; 0 trusts only
# the socket address (REMOTE_ADDR), so a client cannot choose its own address by a header.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, minimum=0)

# --- E-mail (password reset) -------------------------------------------------
# "console" prints messages to the web process's output, "file" writes one file per message
# under $BENCHFORGE_DATA_DIR/mail (EMAIL_FILE_PATH), "smtp" sends through EMAIL_HOST.
EMAIL_KIND = env_choice("EMAIL_BACKEND", "console", ("console", "file", "smtp"))
EMAIL_BACKEND = f"django.core.mail.backends.{EMAIL_KIND}.EmailBackend"
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(DATA_DIR / "mail"))
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "benchforge@localhost")
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 3600, minimum=60)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [STATIC_DIR]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# --- HTTPS and headers ---------------------------------------------------------
# Behind a TLS-terminating proxy: SECURE_PROXY_SSL_HEADER trusts its X-Forwarded-Proto (set it
# only when the proxy always sets or strips that header), SECURE_SSL_REDIRECT sends plain HTTP
# to HTTPS, SECURE_HSTS_SECONDS tells browsers to use HTTPS only (0 = off; turn on once HTTPS
# works, e.g. 31536000).
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("SECURE_PROXY_SSL_HEADER", False) else None
)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# Probes and workers inside the network ask over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content Security Policy (django-csp): scripts only from this site (htmx and plotly.js are
# served locally) or inline with the per-response nonce; no inline event handlers, no eval.
# Inline style attributes stay allowed: the templates and plotly's layout use them, and a
# style cannot run code.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

# --- Caching -------------------------------------------------------------------
# Public release pages are cached per content (releases/page_cache.py). "locmem" keeps the
# cache in each web process; "redis" shares it through REDIS_URL across processes.
CACHE_BACKEND = env_choice("CACHE_BACKEND", "locmem", ("locmem", "redis"))
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": env_str("REDIS_URL", "redis://127.0.0.1:6379/0"),
            "KEY_PREFIX": "bf-cache",
        }
        if CACHE_BACKEND == "redis"
        else {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "OPTIONS": {"MAX_ENTRIES": 2000},
        }
    )
}
PUBLIC_PAGE_CACHE_SECONDS = env_int("PUBLIC_PAGE_CACHE_SECONDS", 3600, minimum=0)
# Which plotly.js the chart pages load (evolution/plotly_assets.py): "cartesian", the
# partial bundle (heatmap, bar, scatter, ...), loaded async; "full", the whole plotly.js of the
# plotly package, loaded before the page's scripts as the pages did before (the chart-page
# benchmark's baseline, bench/bench_chart_pages.py).
PLOTLY_BUNDLE = "cartesian"

# /healthz reports the workers per queue from `celery inspect active_queues`, asked with this
# time-out and cached this long (a stale answer is served while one thread refreshes it).
HEALTHZ_INSPECT_TIMEOUT_SECONDS = env_float("HEALTHZ_INSPECT_TIMEOUT_SECONDS", 1.0, minimum=0.1)
HEALTHZ_WORKERS_CACHE_SECONDS = env_float("HEALTHZ_WORKERS_CACHE_SECONDS", 15.0, minimum=0.0)
# Each web process checks the database and the broker for /healthz at most this often and
# answers the probe from its last report in between (benchapp/health.py: cached_report); a
# check still running after HEALTHZ_STALE_SECONDS makes the probe answer 503.
HEALTHZ_REPORT_SECONDS = env_float("HEALTHZ_REPORT_SECONDS", 2.0, minimum=0.0)
HEALTHZ_STALE_SECONDS = env_float("HEALTHZ_STALE_SECONDS", 10.0, minimum=1.0)

# --- Background work -------------------------------------------------------
REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/0")
# "redis" for production and tests; "filesystem" is the embedded broker used by `make demo`
# (no server needed; the worker and the web process share a spool directory).
BROKER_KIND = env_choice("BROKER_KIND", "filesystem", ("redis", "filesystem", "memory"))
if BROKER_KIND == "redis":
    CELERY_BROKER_URL = REDIS_URL
    # kombu's Redis transport, reporting a closed connection as a connection error so that a
    # worker reconnects after a Redis restart instead of exiting (benchapp/broker.py).
    CELERY_BROKER_TRANSPORT = "benchapp.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Longer than the longest step (a panel measurement with a 600 s model timeout).
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 7200, minimum=60),
    }
elif BROKER_KIND == "filesystem":
    _spool = DATA_DIR / "broker"
    for _sub in ("out", "processed", "control"):
        (_spool / _sub).mkdir(parents=True, exist_ok=True)
    # A host name the transport ignores; without one kombu warns "No hostname was supplied" on
    # every connection (each `run_campaign` printed it).
    CELERY_BROKER_URL = "filesystem://localhost/"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_spool / "out"),
        "data_folder_out": str(_spool / "out"),
        "processed_folder": str(_spool / "processed"),
        # Broadcast (remote control) messages, which kombu would otherwise spool in the cwd.
        "control_folder": str(_spool / "control"),
        "store_processed": False,
    }
else:
    CELERY_BROKER_URL = "memory://localhost/"
    CELERY_BROKER_TRANSPORT_OPTIONS = {}
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# Surviving a broker outage (docs/deployment.md#outages): a worker keeps trying to reconnect for
# as long as the broker is away (Celery's default gives up after 100 tries and exits), also when
# the broker is not there yet at start-up; a task in flight when the connection breaks runs to
# its end (steps are idempotent: its message comes back stale or not at all). A publish is
# retried for about 15 s before the caller sees the error.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_TASK_PUBLISH_RETRY = True
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 6,
    "interval_start": 0,
    "interval_step": 1,
    "interval_max": 4,
}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ROUTES = {
    "evolution.tasks.sandbox_*": {"queue": "sandbox"},
}
CELERY_TASK_DEFAULT_QUEUE = "default"
# Living benchmarks (docs/living.md): hours between the scheduled re-measurements of every
# benchmark's published release by its evaluation panel, run by `celery beat`; 0 turns it off.
LIVING_REMEASURE_HOURS = env_float("LIVING_REMEASURE_HOURS", 168.0, minimum=0.0)
# How often a running campaign re-checks for work that went quiet, and how long a lineage step
# may hold its lease before another worker may take the lineage over.
CAMPAIGN_TICK_SECONDS = env_float("CAMPAIGN_TICK_SECONDS", 15.0, minimum=0.1)
LINEAGE_LEASE_SECONDS = env_float("LINEAGE_LEASE_SECONDS", 1800.0, minimum=1.0)
# Outages pause or heal, never stall (docs/deployment.md#outages). `celery beat` runs the
# supervisor every CAMPAIGN_SUPERVISE_SECONDS (0: off): a campaign whose tick chain has not
# ticked for CAMPAIGN_QUIET_SECONDS gets a new chain; a running campaign with no progress (no
# step completed, no state change) for CAMPAIGN_STALL_SECONDS (0: never) is paused with the
# reason. A step or tick that loses the database or the broker is retried with exponential
# backoff capped at CAMPAIGN_RETRY_BACKOFF_MAX_SECONDS.
CAMPAIGN_SUPERVISE_SECONDS = env_float("CAMPAIGN_SUPERVISE_SECONDS", 60.0, minimum=0.0)
CAMPAIGN_QUIET_SECONDS = env_float(
    "CAMPAIGN_QUIET_SECONDS", max(120.0, 4 * CAMPAIGN_TICK_SECONDS), minimum=1.0
)
CAMPAIGN_STALL_SECONDS = env_float("CAMPAIGN_STALL_SECONDS", 3600.0, minimum=0.0)
CAMPAIGN_RETRY_BACKOFF_MAX_SECONDS = env_float(
    "CAMPAIGN_RETRY_BACKOFF_MAX_SECONDS", 60.0, minimum=0.1
)
CELERY_BEAT_SCHEDULE = {}
# `celery beat` writes a heartbeat file next to its schedule file at least every
# BEAT_HEARTBEAT_SECONDS; `python -m benchapp.beat --schedule FILE` checks it (benchapp/beat.py).
CELERY_BEAT_SCHEDULER = "benchapp.beat:Scheduler"
BEAT_HEARTBEAT_SECONDS = env_float("BEAT_HEARTBEAT_SECONDS", 15.0, minimum=1.0)
if LIVING_REMEASURE_HOURS:
    CELERY_BEAT_SCHEDULE["living-remeasure"] = {
        "task": "releases.tasks.remeasure_scheduled",
        "schedule": timedelta(hours=LIVING_REMEASURE_HOURS),
    }
# Background jobs (releases' leaderboard runs, independent evaluations, re-measurements and
# question runs; benchapp's seed imports) have one supervisor, evolution.jobs
# (docs/deployment.md#outages): every
# JOB_SUPERVISE_SECONDS (0: off) beat sends again the jobs still queued JOB_RESEND_SECONDS after
# their message was sent, and takes back the running jobs whose worker stopped heartbeating (it
# beats every JOB_HEARTBEAT_SECONDS) for JOB_LOST_SECONDS: queued again, or failed with the
# reason once JOB_MAX_LOST_WORKERS executions died holding it.
JOB_SUPERVISE_SECONDS = env_float("JOB_SUPERVISE_SECONDS", 60.0, minimum=0.0)
JOB_RESEND_SECONDS = env_float("JOB_RESEND_SECONDS", 600.0, minimum=1.0)
JOB_HEARTBEAT_SECONDS = env_float("JOB_HEARTBEAT_SECONDS", 15.0, minimum=0.1)
JOB_LOST_SECONDS = env_float("JOB_LOST_SECONDS", max(120.0, 4 * JOB_HEARTBEAT_SECONDS), minimum=1.0)
JOB_MAX_LOST_WORKERS = env_int("JOB_MAX_LOST_WORKERS", 3, minimum=1)
if JOB_SUPERVISE_SECONDS:
    CELERY_BEAT_SCHEDULE["job-supervisor"] = {
        "task": "evolution.jobs.supervise",
        "schedule": timedelta(seconds=JOB_SUPERVISE_SECONDS),
        "options": {"expires": JOB_SUPERVISE_SECONDS},
    }
if CAMPAIGN_SUPERVISE_SECONDS:
    CELERY_BEAT_SCHEDULE["campaign-supervisor"] = {
        "task": "evolution.streams.supervise",
        "schedule": timedelta(seconds=CAMPAIGN_SUPERVISE_SECONDS),
        # A pass that could not run in time is replaced by the next one, not piled up.
        "options": {"expires": CAMPAIGN_SUPERVISE_SECONDS},
    }
# Threads one engine step uses for parallel model calls (each holds a DB connection).
ENGINE_FANOUT_THREADS = env_int("ENGINE_FANOUT_THREADS", 8, minimum=1)

# --- Sandbox -----------------------------------------------------------------
# Parsed by the sandbox itself, so that the judge's command line can read them without this file.
_sandbox = sandbox_config.from_environ()
SANDBOX_BACKEND = _sandbox["SANDBOX_BACKEND"]
SANDBOX_ALLOW_UNSAFE = _sandbox["SANDBOX_ALLOW_UNSAFE"]
SANDBOX_MAX_PARALLEL = _sandbox["SANDBOX_MAX_PARALLEL"]
SANDBOX_PYTHON = _sandbox["SANDBOX_PYTHON"]
SANDBOX_DOCKER_IMAGE = _sandbox["SANDBOX_DOCKER_IMAGE"]
SANDBOX_MAX_OUTPUT_BYTES = _sandbox["SANDBOX_MAX_OUTPUT_BYTES"]
SANDBOX_ISOLATION = _sandbox["SANDBOX_ISOLATION"]
SANDBOX_GROUP_SIZE = _sandbox["SANDBOX_GROUP_SIZE"]
SANDBOX_START_SECONDS = _sandbox["SANDBOX_START_SECONDS"]
SANDBOX_CACHE_DIR = _sandbox["SANDBOX_CACHE_DIR"]

# --- Input sizes -------------------------------------------------------------
# Checked while input is decoded (before anything is stored), naming the line and the field.
# A full LiveCodeBench import with its largest private tests may need the last two raised.
MAX_STATEMENT_BYTES = env_int("MAX_STATEMENT_BYTES", 256 * 1024, minimum=1024)
MAX_SOLUTION_BYTES = env_int("MAX_SOLUTION_BYTES", 256 * 1024, minimum=1024)
MAX_TEST_BYTES = env_int("MAX_TEST_BYTES", 16 * 1024 * 1024, minimum=1024)
MAX_DECOMPRESSED_BYTES = env_int("MAX_DECOMPRESSED_BYTES", 64 * 1024 * 1024, minimum=1024)
MAX_IMPORT_LINE_BYTES = env_int("MAX_IMPORT_LINE_BYTES", 64 * 1024 * 1024, minimum=1024)
MAX_UPLOAD_BYTES = env_int("MAX_UPLOAD_BYTES", 32 * 1024 * 1024, minimum=1024)
# Django refuses larger uploads before a view reads them (RequestDataTooBig: a 400).
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_BYTES

# --- Model gateway ---------------------------------------------------------------
LLM_DEFAULT_TIMEOUT = env_float("LLM_DEFAULT_TIMEOUT", 600.0, minimum=1.0)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 5, minimum=0)
LLM_CASSETTE_DIR = Path(
    env_str("LLM_CASSETTE_DIR", str(BASE_DIR / "evolution" / "benchevolver" / "demo" / "cassettes"))
)
# Further directories an endpoint's cassette may live in (the bundled demo packs' own).
# A cassette outside LLM_CASSETTE_DIR and these is refused: the worker reads and may write it.
LLM_CASSETTE_ROOTS = [
    Path(p)
    for p in env_list(
        "LLM_CASSETTE_ROOTS",
        [
            str(BASE_DIR / app / "demo")
            for app in ("reasoning", "xcoder", "evosyn", "frontiersmith")
        ],
    )
]
# An endpoint may only name an API-key variable with this prefix, or one listed by name in
# LLM_KEY_ENV_ALLOW: never SECRET_KEY, DATABASE_URL or any other secret of the worker.
LLM_KEY_ENV_PREFIX = env_str("LLM_KEY_ENV_PREFIX", "BENCHFORGE_KEY_")
LLM_KEY_ENV_ALLOW = env_list("LLM_KEY_ENV_ALLOW", [])
# Where model endpoints may send requests (evolution/policy/urlpolicy.py, docs/security.md): http(s)
# only, no link-local or cloud metadata address ever, public addresses, and loopback, private
# and other non-public addresses only inside these networks (comma-separated, CIDR: e.g.
# 127.0.0.0/8,::1/128 for a model server on this machine, 10.1.2.3/32 for one on the lab's
# network). Checked when an endpoint is saved and on every request, after DNS resolution.
# Empty (the default): no private address at all.
ENDPOINT_ALLOWED_PRIVATE_NETWORKS = env_networks("ENDPOINT_ALLOWED_PRIVATE_NETWORKS", [])
# Per-endpoint concurrency limit: "redis" holds it across every worker process; "local" is a
# process-local semaphore for the embedded demo, which runs without a Redis server.
LLM_LIMITER = env_choice(
    "LLM_LIMITER", "redis" if BROKER_KIND == "redis" else "local", ("redis", "local")
)
# Append every successful exchange of an "openai" endpoint that names a cassette to that cassette.
LLM_RECORD = env_bool("LLM_RECORD", False)
# Exponential backoff between retries: base * 2**attempt with full jitter, capped at the maximum.
LLM_BACKOFF_BASE_S = env_float("LLM_BACKOFF_BASE_S", 1.0, minimum=0.0)
LLM_BACKOFF_MAX_S = env_float("LLM_BACKOFF_MAX_S", 60.0, minimum=0.0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # axes logs every successful login at INFO; its failures and lockouts stay (WARNING).
    "loggers": {
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
    },
}
