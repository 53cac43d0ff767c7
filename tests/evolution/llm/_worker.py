"""A separate worker process for the multi-process limiter test (not a test module).

    python -m tests.evolution.llm._worker --endpoint-id N --threads T --calls-per-thread C

Runs T threads, each making C calls through LLMClient, and prints a JSON summary. The
database and Redis come from the environment, exactly as for a Celery worker.
"""

from __future__ import annotations

import argparse
import json
import os
import threading

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchapp.settings")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint-id", type=int, required=True)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--calls-per-thread", type=int, default=4)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection

    from evolution.llm import LLMClient
    from evolution.models import ModelEndpoint

    endpoint = ModelEndpoint.objects.get(pk=args.endpoint_id)
    ok: list[int] = []
    errors: list[str] = []

    def work(index: int) -> None:
        client = LLMClient(endpoint)
        try:
            for n in range(args.calls_per_thread):
                try:
                    client.chat(
                        [{"role": "user", "content": f"pid {os.getpid()} thread {index} call {n}"}],
                        role="solver",
                    )
                    ok.append(1)
                except Exception as exc:  # reported to the test, which fails on any
                    errors.append(f"{exc.__class__.__name__}: {exc}")
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(args.threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"ok": len(ok), "errors": errors}))


if __name__ == "__main__":
    main()
