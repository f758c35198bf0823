"""PyTorch DDP through in-network aggregation: a comm hook that averages each gradient bucket
through this rank's switchml agent (a Java worker process joined to the job).

    import switchml_torch
    agent = switchml_torch.start_agent()                                # this rank's worker, joined to the job
    ddp_model.register_comm_hook(agent, switchml_torch.allreduce_hook)  # buckets averaged through the switch
"""

from .agent import Agent, AgentError, start_agent
from .hook import allreduce_hook

__all__ = ["Agent", "AgentError", "start_agent", "allreduce_hook"]
