"""A second MCP client for src/mcp/pythonClient.test.ts: the Python MCP SDK (`mcp` from PyPI,
scripts/mcp-python.sh pins it) over the Streamable HTTP transport. It lists the tools, calls one
with a progress callback, and prints one JSON line for the test to assert on.

Usage: python mcp_python_client.py MCP_URL TOOL_NAME ARGUMENTS_JSON, and either
- MCP_ACCESS_TOKEN: a bearer token the test obtained, or
- MCP_REDIRECT_URI: the SDK's own OAuth provider then discovers the server, registers itself as a
  public client (RFC 7591), prints `{"authorize": URL}` and reads the callback URL (the user's
  answer, which the test gives as a browser would) from stdin.
Secrets come by environment, not argument: a process's arguments are visible to every user.
"""

import asyncio
import json
import os
import sys
from urllib.parse import parse_qs, urlparse

import httpx
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


class MemoryStorage:
    """The SDK's TokenStorage in memory: no client until the SDK registers one."""

    def __init__(self) -> None:
        self.client: OAuthClientInformationFull | None = None
        self.tokens: OAuthToken | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def oauth(url: str) -> tuple[OAuthClientProvider, MemoryStorage]:
    redirect = os.environ["MCP_REDIRECT_URI"]
    metadata = {
        "redirect_uris": [redirect],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "client_name": "Python MCP SDK tests",
    }
    storage = MemoryStorage()

    async def redirect_handler(authorization_url: str) -> None:
        print(json.dumps({"authorize": authorization_url}), flush=True)

    async def callback_handler() -> tuple[str, str | None]:
        line = await asyncio.to_thread(sys.stdin.readline)
        query = parse_qs(urlparse(line.strip()).query)
        if "code" not in query:
            raise RuntimeError(f"no code at the callback: {line.strip()}")
        return query["code"][0], query.get("state", [None])[0]

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(**metadata),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    return provider, storage


async def main(url: str, tool: str, arguments: dict) -> dict:
    token = os.environ.get("MCP_ACCESS_TOKEN")
    auth, storage = (None, None) if token else oauth(url)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    progress: list[dict] = []

    async def on_progress(
        value: float, total: float | None, message: str | None
    ) -> None:
        progress.append({"progress": value, "message": message})

    timeout = httpx.Timeout(30, read=300)
    async with (
        httpx.AsyncClient(headers=headers, auth=auth, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        tools = (await session.list_tools()).tools
        result = await session.call_tool(tool, arguments, progress_callback=on_progress)
        return {
            "protocol_version": init.protocolVersion,
            "server": init.serverInfo.name,
            "tools": [{"name": t.name, "title": t.title} for t in tools],
            "is_error": result.isError,
            "structured": result.structuredContent,
            "text": [c.text for c in result.content if c.type == "text"],
            "meta": result.meta,
            "progress": progress,
            "token_scope": storage.tokens.scope if storage and storage.tokens else None,
            "client_id": storage.client.client_id if storage and storage.client else None,
        }


if __name__ == "__main__":
    print(
        json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))))
    )
