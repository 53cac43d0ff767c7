"""The Redis broker transport, made to survive a broker that goes away.

kombu's Redis channel, when its connection breaks while it holds unacknowledged messages (a
task in flight with ``acks_late``, or a delayed task such as a campaign's next tick), tries on
close to put those messages back, which needs a new client built from the connection that is
already gone: it fails with ``AttributeError: 'NoneType' object has no attribute 'hostname'``,
which is not a connection error, so the worker's consumer does not reconnect but exits
("Unrecoverable error"). Reproduced here with a real Redis killed under a running campaign
(tests/evolution/streams/test_outages.py), whatever the worker pool.

This transport reports that case as what it is, a connection error: the consumer swallows it
and reconnects. The messages it could not put back stay in Redis's unacknowledged set (when
Redis kept them) and return to their queue after ``CELERY_VISIBILITY_TIMEOUT``; campaign steps
and ticks do not wait for that (the supervisor restarts their chains).

Selected by ``CELERY_BROKER_TRANSPORT`` when ``BROKER_KIND=redis``.
"""

from __future__ import annotations

from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous=False):
        transport = self.connection
        if transport is None or getattr(transport, "client", None) is None:
            raise kombu_redis.redis.exceptions.ConnectionError(
                "the broker connection is closed: cannot open a new client on it"
            )
        return super()._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
