"""The connection pool an I/O budget gives an S3 client
(:func:`truereward.util.io.with_connections`)."""

from __future__ import annotations

import pytest

from truereward.util.io import MOST_CONNECTIONS, REQUESTS_PER_RUN, with_connections

OPTIONS = {"endpoint_url": "http://127.0.0.1:9", "config_kwargs": {"retries": {"mode": "standard"}}}


def pool(options: dict[str, object]) -> object:
    config = options.get("config_kwargs")
    assert isinstance(config, dict)
    return config.get("max_pool_connections")


@pytest.mark.parametrize(
    ("budget", "connections"),
    [
        # A run's requests at once, for every run of the budget...
        (8, 8 * REQUESTS_PER_RUN),
        (16, 16 * REQUESTS_PER_RUN),
        # ...up to the cap, which the default budget for object stores reaches...
        (32, MOST_CONNECTIONS),
        (64, MOST_CONNECTIONS),
        # ...and never fewer than one connection a run.
        (200, 200),
    ],
)
def test_the_pool_holds_every_request_of_the_budget_up_to_the_cap(
    budget: int, connections: int
) -> None:
    sized = with_connections(OPTIONS, budget)
    assert pool(sized) == connections
    assert sized["config_kwargs"]["retries"] == {"mode": "standard"}  # the rest kept
    assert pool(OPTIONS) is None  # the caller's options are not changed


def test_a_budget_within_botocores_default_pool_and_a_given_pool_are_left_alone() -> None:
    # botocore keeps 10 connections: a budget of 3 runs is 9 requests.
    assert with_connections(OPTIONS, 3) is OPTIONS
    given = {"config_kwargs": {"max_pool_connections": 5}}
    assert with_connections(given, 64) is given
