"""PyTorch through in-network aggregation.

As a torch.distributed backend (``import switchml_torch`` registers it)::

    import switchml_torch
    dist.init_process_group("switchml")          # all_reduce (SUM, AVG) through the switch; DDP needs nothing more

or as a DDP communication hook on a Gloo group, through its host's agent (a Java worker process its ranks share)::

    agent = switchml_torch.start_agent()                                # its host's agent, joined to the job
    ddp_model.register_comm_hook(agent, switchml_torch.allreduce_hook)  # buckets averaged through the switch
"""

import warnings

from .agent import SUPPORTED_DTYPES, Agent, AgentError, start_agent
from .hook import allreduce_hook

try:
    from .backend import SwitchMLProcessGroup, register as _register
    _register()
except Exception as _e:  # a PyTorch whose extension API differs: the hook still works
    SwitchMLProcessGroup = None
    warnings.warn("switchml_torch: could not register the 'switchml' torch.distributed backend on PyTorch %s: %s"
                  % (__import__("torch").__version__, _e))

__all__ = ["Agent", "AgentError", "start_agent", "allreduce_hook", "SwitchMLProcessGroup", "SUPPORTED_DTYPES"]
