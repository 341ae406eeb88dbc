"""A second MCP client for src/mcp/pythonClient.test.ts: the Python MCP SDK (`mcp` from PyPI,
scripts/mcp-python.sh pins it) over the Streamable HTTP transport with a bearer token. It lists the
tools, calls one with a progress callback, and prints one JSON line for the test to assert on.

Usage: python mcp_python_client.py MCP_URL TOOL_NAME ARGUMENTS_JSON, the token in MCP_ACCESS_TOKEN
(not an argument: a process's arguments are visible to every user of the machine).
"""

import asyncio
import json
import os
import sys

import httpx
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, tool: str, arguments: dict) -> dict:
    headers = {"Authorization": f"Bearer {os.environ['MCP_ACCESS_TOKEN']}"}
    progress: list[dict] = []

    async def on_progress(
        value: float, total: float | None, message: str | None
    ) -> None:
        progress.append({"progress": value, "message": message})

    timeout = httpx.Timeout(30, read=300)
    async with (
        httpx.AsyncClient(headers=headers, timeout=timeout) as http,
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
        }


if __name__ == "__main__":
    print(
        json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))))
    )
