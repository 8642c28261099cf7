"""http_mock services: a real server on loopback that answers from routes and records."""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sounding.services import ServiceSet, start_services, validate_service_specs

ROUTES = [
    {"method": "POST", "path": "/v1/charges", "status": 201, "json": {"id": "ch_1"}},
    {"method": "GET", "path": "/v1/customers/*", "json": {"name": "Ann"}},
    {"path": "/health", "body": "ok", "headers": {"X-Mock": "yes"}},
]


def start(tmp_path: Path, **spec: Any) -> ServiceSet:
    declared = {"name": "stripe-api", "type": "http_mock", "routes": ROUTES, **spec}
    return start_services([declared], trial_dir=tmp_path / "trial", suite_dir=tmp_path)


@pytest.fixture
def mock(tmp_path: Path) -> Iterator[ServiceSet]:
    services = start(tmp_path, record=True)
    yield services
    services.stop()


def url(services: ServiceSet) -> str:
    return services.env["SOUNDING_STRIPE_API_URL"]


def recorded(services: ServiceSet) -> list[dict[str, Any]]:
    return list(services.evidence()["stripe-api"].details["requests"])


def test_routes_answer_with_status_json_body_and_headers(mock: ServiceSet) -> None:
    created = httpx.post(f"{url(mock)}/v1/charges", json={"amount": 100})
    assert (created.status_code, created.json()) == (201, {"id": "ch_1"})
    assert created.headers["content-type"] == "application/json"
    assert httpx.get(f"{url(mock)}/v1/customers/cus_9").json() == {"name": "Ann"}
    health = httpx.delete(f"{url(mock)}/health")
    assert (health.text, health.headers["x-mock"]) == ("ok", "yes")


def test_an_unrouted_request_gets_a_404_that_says_why(mock: ServiceSet) -> None:
    answer = httpx.put(f"{url(mock)}/v2/nothing")
    assert answer.status_code == 404
    assert "no route for PUT /v2/nothing" in answer.json()["error"]


@pytest.mark.parametrize(
    ("default", "status", "text"),
    [(503, 503, ""), ({"status": 200, "json": []}, 200, "[]"), ({"body": "hi"}, 200, "hi")],
)
def test_the_default_response_is_a_status_or_a_reply(
    tmp_path: Path, default: Any, status: int, text: str
) -> None:
    services = start(tmp_path, default_response=default)
    try:
        answer = httpx.get(f"{url(services)}/elsewhere")
        assert (answer.status_code, answer.text) == (status, text)
    finally:
        services.stop()


def test_record_keeps_query_headers_body_and_json(mock: ServiceSet) -> None:
    httpx.post(
        f"{url(mock)}/v1/charges?currency=eur&tag=a&tag=b",
        json={"amount": 100},
        headers={"Authorization": "Bearer sk_test"},
    )
    httpx.post(f"{url(mock)}/v1/charges", content=b"not json")
    first, second = recorded(mock)
    assert first["method"] == "POST" and first["path"] == "/v1/charges"
    assert first["query"] == {"currency": ["eur"], "tag": ["a", "b"]}
    assert first["headers"]["Authorization"] == "Bearer sk_test"
    assert first["json"] == {"amount": 100}
    assert first["body"] == '{"amount":100}'
    assert second["body"] == "not json" and "json" not in second
    assert first["time"] <= second["time"]


def test_a_chunked_body_is_read_whole(mock: ServiceSet) -> None:
    port = int(url(mock).rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request("POST", "/v1/charges", body=iter([b'{"a": ', b"1}"]), encode_chunked=True)
    assert connection.getresponse().status == 201
    connection.close()
    assert recorded(mock)[0]["json"] == {"a": 1}


def test_a_client_that_expects_100_continue_gets_it(mock: ServiceSet) -> None:
    port = int(url(mock).rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(
            b"POST /v1/charges HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
            b"Expect: 100-continue\r\n\r\n"
        )
        assert connection.recv(64).startswith(b"HTTP/1.1 100 Continue")
        connection.sendall(b"{}")
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 201 ")
    assert recorded(mock)[0]["json"] == {}


def test_head_answers_without_a_body(mock: ServiceSet) -> None:
    answer = httpx.head(f"{url(mock)}/health")
    assert answer.status_code == 200 and answer.content == b""


def test_without_record_only_method_path_and_time_are_kept(tmp_path: Path) -> None:
    services = start(tmp_path)
    try:
        httpx.post(f"{url(services)}/v1/charges?x=1", json={"secret": "card"})
        (request,) = recorded(services)
        assert set(request) == {"method", "path", "time"}
        assert services.evidence()["stripe-api"].details["record"] is False
    finally:
        services.stop()


def test_stop_closes_the_port_and_is_idempotent(tmp_path: Path) -> None:
    services = start(tmp_path, record=True)
    port = int(url(services).rsplit(":", 1)[1])
    services.stop()
    services.stop()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass
    assert services.evidence()["stripe-api"].url is None


def test_two_mocks_get_two_ports(tmp_path: Path) -> None:
    declared = [{"name": "a", "type": "http_mock"}, {"name": "b", "type": "http_mock"}]
    with start_services(declared, trial_dir=tmp_path, suite_dir=tmp_path) as services:
        assert services.env["SOUNDING_A_URL"] != services.env["SOUNDING_B_URL"]


@pytest.mark.parametrize(
    ("route", "problem"),
    [
        ({"path": "v1"}, "routes[0].path"),
        ({"path": "/x", "json": {}, "body": "y"}, "either json: or body:"),
        ({"path": "/x", "status": 99}, "routes[0].status: must be at least 100"),
        ({"path": "/x", "respones": {}}, "routes[0].respones: unknown key 'respones'"),
    ],
)
def test_bad_routes_are_refused_at_load(route: dict[str, Any], problem: str) -> None:
    (found,) = validate_service_specs([{"name": "m", "type": "http_mock", "routes": [route]}])
    assert found.startswith("service 'm' (services[0]): ")
    assert problem in found
