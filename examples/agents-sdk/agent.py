"""An order-support agent on the OpenAI Agents SDK, as one would write it for production:
nothing in it knows about sounding. The model's address and key come from the usual
variables (OPENAI_BASE_URL, OPENAI_API_KEY)."""

import asyncio
import json
import sys

from agents import Agent, Runner, function_tool, set_default_openai_api, set_tracing_disabled

ORDERS = {
    "A-1001": {"status": "shipped", "carrier": "Parcelix", "eta": "Friday"},
    "A-1002": {"status": "delayed", "carrier": "Parcelix", "eta": "next Tuesday"},
}


@function_tool
def lookup_order(order_id: str) -> str:
    """The status of an order, by its id (like A-1001)."""
    return json.dumps(ORDERS.get(order_id, {"error": f"no order {order_id}"}))


set_default_openai_api("chat_completions")  # what most OpenAI-compatible servers speak
set_tracing_disabled(True)  # offline: traces stay here
agent = Agent(
    name="support",
    instructions="You answer questions about orders. Look the order up before you answer.",
    model="support-model",
    tools=[lookup_order],
)

if __name__ == "__main__":
    result = asyncio.run(Runner.run(agent, sys.stdin.read()))
    print(result.final_output)
