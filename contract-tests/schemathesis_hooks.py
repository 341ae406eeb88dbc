"""Schemathesis hooks for `npm run test:fuzz` (scripts/fuzz.ts sets SCHEMATHESIS_HOOKS to this file).

Generated data alone never reaches a successful grant: client ids are unknown, codes are random and
nobody is logged in. These hooks make every *schema-valid* (positive) case of the OAuth operations a
real one, the way a third-party app and its user would produce it, and leave negative cases alone:

- authorize: the registered client and callback, a known scope and a logged-in user's session, and
  no generated request_uri (it would name no pushed request);
- exchangeToken: a fresh authorization code minted through the real login and consent pages (or a
  fresh refresh token from one), with the client authenticating in the body or with HTTP Basic;
- revokeToken, introspectToken: a real access or refresh token of the client, or (as generated) an
  unknown one.

Two identities: each API-key or OAuth-token call is sent as user A or user B, chosen by the run's
seed (a workflow created in the run is always called as its owner). A check (`ownership`) repeats
each successful read of a workflow or its runs as the other user and fails unless that is a 404;
another (`success_paths`) fails the run when authorize or exchangeToken never answered a 2xx.
Revocations revoke tokens of a third user, C, since revoking ends the user's whole grant.
"""

import base64
import hashlib
import os
import random
import re
import threading
from html import unescape
from urllib.parse import parse_qs, urlencode, urlparse

import requests
import schemathesis
from schemathesis.generation import GenerationMode

BASE_URL = os.environ["FUZZ_BASE_URL"]
CLIENT_ID = os.environ["CONTRACT_CLIENT_ID"]
CLIENT_SECRET = os.environ["CONTRACT_CLIENT_SECRET"]
REDIRECT_URI = os.environ["CONTRACT_REDIRECT_URI"]
SCOPES = ["user_info", "api_key", "user_info api_key", "api_key user_info"]
# PKCE (RFC 7636), which the service requires of every client: one verifier for every minted code.
PKCE_VERIFIER = "fuzz-pkce-verifier-0123456789abcdefghijklmnopqrstuvwxyz"
PKCE_CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(PKCE_VERIFIER.encode()).digest()).decode().rstrip("=")

IDENTITIES = {
    "A": {
        "login": os.environ["CONTRACT_LOGIN"],
        "password": os.environ["CONTRACT_PASSWORD"],
        "api_key": os.environ["CONTRACT_API_KEY"],
        "access_token": os.environ["CONTRACT_ACCESS_TOKEN"],
    },
    "B": {
        "login": os.environ["CONTRACT_B_LOGIN"],
        "password": os.environ["CONTRACT_B_PASSWORD"],
        "api_key": os.environ["CONTRACT_B_API_KEY"],
        "access_token": os.environ["CONTRACT_B_ACCESS_TOKEN"],
    },
}
# Revoking a token ends its user's whole grant to the app: revocations use user C, so that A's and
# B's tokens (the other operations' credentials) stay valid.
REVOKER = {"login": os.environ["CONTRACT_C_LOGIN"], "password": os.environ["CONTRACT_C_PASSWORD"]}
USERS = {**IDENTITIES, "C": REVOKER}
BEARERS = {f"Bearer {i[kind]}": name for name, i in IDENTITIES.items() for kind in ("api_key", "access_token")}

# The run's seed also picks identities and variants, so a failing run can be replayed.
rng = random.Random(int(os.environ.get("FUZZ_SEED", "0")))
lock = threading.Lock()
sessions: dict[str, requests.Session] = {}
owners: dict[str, str] = {}


def hidden_fields(page: str) -> dict[str, str]:
    return {m[0]: unescape(m[1]) for m in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page)}


def session_of(identity: str) -> requests.Session:
    """A browser session of the identity's user, logged in through the real login page."""
    with lock:
        if identity not in sessions:
            s = requests.Session()
            page = s.get(f"{BASE_URL}/login", params={"return_to": "/settings/applications"}).text
            user = USERS[identity]
            answer = s.post(
                f"{BASE_URL}/login",
                data={"login": user["login"], "password": user["password"], "csrf_token": hidden_fields(page)["csrf_token"], "return_to": "/settings/applications"},
                allow_redirects=False,
            )
            assert answer.status_code == 303, f"login of {user['login']} failed: {answer.status_code}"
            sessions[identity] = s
        return sessions[identity]


def mint_code(identity: str, scope: str) -> str:
    """An authorization code, as the user's browser gets it: authorize, consent, allow."""
    s = session_of(identity)
    query = {"response_type": "code", "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "scope": scope, "state": "fuzz", "code_challenge": PKCE_CHALLENGE, "code_challenge_method": "S256"}
    consent = s.get(f"{BASE_URL}/oauth/authorize", params=query, allow_redirects=False)
    if consent.status_code == 302:  # an earlier consent may answer at once
        location = consent.headers["Location"]
    else:
        assert consent.status_code == 200, f"authorize answered {consent.status_code}"
        answer = s.post(f"{BASE_URL}/oauth/authorize/decision", data={**hidden_fields(consent.text), "decision": "allow"}, allow_redirects=False)
        location = answer.headers["Location"]
    return parse_qs(urlparse(location).query)["code"][0]


def mint_tokens(identity: str, scope: str) -> dict:
    code = mint_code(identity, scope)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI, "code_verifier": PKCE_VERIFIER, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
    answer = requests.post(f"{BASE_URL}/api/open/oauth/token", data=form)
    assert answer.status_code == 200, f"code exchange failed: {answer.status_code} {answer.text}"
    return answer.json()


def authenticate_client(case, body: dict) -> None:
    """The client's credentials in the body or as HTTP Basic (RFC 6749 2.3.1), never both."""
    case.headers = {k: v for k, v in (case.headers or {}).items() if k.lower() != "authorization"}
    if rng.random() < 0.5:
        body.update(client_id=CLIENT_ID, client_secret=CLIENT_SECRET)
    else:
        body.pop("client_id", None)
        body.pop("client_secret", None)
        case.headers["Authorization"] = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()


def positive(case) -> bool:
    meta = getattr(case, "meta", None)
    return meta is not None and meta.generation.mode == GenerationMode.POSITIVE


@schemathesis.hook
def before_call(context, case, kwargs):
    operation_id = case.operation.definition.raw.get("operationId")
    # Two identities on every API-key and OAuth-token call the generator authenticated. A call on a
    # workflow created in this run goes as its owner (stateful sequences stay one user's); the
    # `ownership` check then asks the same of the other user.
    workflow_id = (case.path_parameters or {}).get("workflow_id")
    identity = owners.get(workflow_id) or rng.choice(["A", "B"])
    auth = (case.headers or {}).get("Authorization")
    if auth in BEARERS:
        kind = "api_key" if auth.removeprefix("Bearer ").startswith("sk_") else "access_token"
        case.headers["Authorization"] = f"Bearer {IDENTITIES[identity][kind]}"
    if not positive(case):
        return
    if operation_id == "authorize":
        query = dict(case.query or {})
        query.update(client_id=CLIENT_ID, redirect_uri=REDIRECT_URI, scope=rng.choice(SCOPES))
        # A generated request_uri names no pushed request (an error page, rightly); pushed requests
        # are walked in src/oauth/par.test.ts.
        query.pop("request_uri", None)
        # A generated resource is not one of this server's (a redirect with invalid_target,
        # rightly); resource indicators are walked in src/oauth/resourceIndicators.test.ts.
        query.pop("resource", None)
        if "code_challenge" in query:
            query["code_challenge_method"] = "S256"
        case.query = query
        cookie = "; ".join(f"{k}={v}" for k, v in session_of(identity).cookies.items())
        case.headers = {**(case.headers or {}), "Cookie": cookie}
    elif operation_id == "exchangeToken" and isinstance(case.body, dict):
        scope = rng.choice(SCOPES)
        if case.body.get("grant_type") == "refresh_token":
            body = {"grant_type": "refresh_token", "refresh_token": mint_tokens(identity, scope)["refresh_token"]}
            if case.body.get("scope") in SCOPES:
                body["scope"] = "user_info"  # a subset of every scope granted here
        else:
            body = {"grant_type": "authorization_code", "code": mint_code(identity, scope), "redirect_uri": REDIRECT_URI, "code_verifier": PKCE_VERIFIER}
        authenticate_client(case, body)
        case.body = body
    elif operation_id in ("revokeToken", "introspectToken") and isinstance(case.body, dict):
        body = {"token": case.body.get("token", "unknown")}
        if rng.random() < 0.5:
            tokens = mint_tokens("C", rng.choice(SCOPES))
            hint = rng.choice(["access_token", "refresh_token"])
            body.update(token=tokens[hint], token_type_hint=hint)
        authenticate_client(case, body)
        case.body = body


def caller(response) -> str | None:
    return BEARERS.get(response.request.headers.get("Authorization", ""))


@schemathesis.hook
def after_call(context, case, response):
    if case.operation.definition.raw.get("operationId") == "createWorkflow" and response.status_code == 201:
        workflow_id = response.json()["data"]["id"]
        with lock:
            owners[workflow_id] = caller(response) or "?"


@schemathesis.check
def ownership(ctx, response, case):
    """What one user reads of a workflow (or its runs), the other user gets 404 for."""
    workflow_id = (case.path_parameters or {}).get("workflow_id")
    owner, who = owners.get(workflow_id), caller(response)
    if owner is None or who != owner or response.request.method != "GET" or not 200 <= response.status_code < 300:
        return None
    other = "B" if owner == "A" else "A"
    probe = requests.get(response.request.url, headers={"Authorization": f"Bearer {IDENTITIES[other]['api_key']}"})
    if probe.status_code != 404:
        raise AssertionError(f"user {other} got {probe.status_code} for user {owner}'s {response.request.url}")
    return None


@schemathesis.check
class success_paths:
    """The run reached authorize's consent page and an issued token, not only error paths."""

    def __init__(self):
        self.reached = set()

    def after_response(self, ctx, response, case):
        operation_id = case.operation.definition.raw.get("operationId")
        if operation_id in ("authorize", "exchangeToken") and 200 <= response.status_code < 300:
            self.reached.add(operation_id)

    def after_run(self, ctx):
        missing = {"authorize", "exchangeToken"} - self.reached
        if missing:
            raise AssertionError("never answered 2xx: " + ", ".join(sorted(missing)))
