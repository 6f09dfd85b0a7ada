# A module that reads a file of the worker's machine when it is imported: refused by the
# recorder's confinement (worker/pyrec/kgb_confine.py), so the module does not import.
import torch

HOST = open("/etc/hostname").read()


def silu(self):
    return torch.empty_like(self)
