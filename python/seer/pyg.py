"""PyTorch Geometric adapter: Seer batches as torch_geometric.data.Data.

Importable without PyG (AVAILABLE is then False and the functions raise ImportError
naming torch_geometric). With PyG:

    from seer import pyg
    for data in pyg.NeighborLoader(ds, fanouts=[10, 10], batch_size=1000):
        out = model(data.x, data.edge_index)[:data.batch_size]   # SAGEConv, GATConv, ...
        loss = F.cross_entropy(out, data.y[:data.batch_size])

Each Data has the attributes torch_geometric.loader.NeighborLoader gives: x, edge_index
(row = source, col = target, local ids), y (of every node in n_id, -1 = unlabeled or
not loaded: only the seeds' labels are read), n_id, batch_size, input_id (the seeds'
global ids), num_sampled_nodes and num_sampled_edges (per hop), so PyG's
trim_to_layer works unchanged. Unlike PyG's loader, Seer samples every target at every
hop (see seer.Batch), so edge_index may repeat an edge in two hops. A typed dataset's
batches add node_type, local_id and edge_type (e.g. RGCNConv(x, edge_index, edge_type)).
"""
import torch

import seer

try:
    import torch_geometric
    from torch_geometric.data import Data
except ImportError:  # PyG is optional
    torch_geometric = None
    Data = None

AVAILABLE = torch_geometric is not None

__all__ = ["AVAILABLE", "to_data", "NeighborLoader"]


def _require():
    if not AVAILABLE:
        raise ImportError("seer.pyg needs torch_geometric (pip install torch_geometric); "
                          "seer.NeighborLoader's batches work without it")


def to_data(batch):
    """A torch_geometric.data.Data with the batch's tensors (no copy)."""
    _require()
    y = torch.full((batch.num_nodes,), -1, dtype=batch.y.dtype)
    y[: batch.batch_size] = batch.y
    typed = {}
    if batch.node_type is not None:
        typed = dict(node_type=batch.node_type, local_id=batch.local_id, edge_type=batch.edge_type)
    return Data(x=batch.x, edge_index=batch.edge_index, y=y, n_id=batch.n_id, batch_size=batch.batch_size,
                input_id=batch.n_id[: batch.batch_size], num_sampled_nodes=list(batch.num_sampled_nodes),
                num_sampled_edges=list(batch.num_sampled_edges), num_nodes=batch.num_nodes, **typed)


class NeighborLoader(seer.NeighborLoader):
    """seer.NeighborLoader yielding torch_geometric.data.Data (same arguments)."""

    def __init__(self, *args, **kwargs):
        _require()
        super().__init__(*args, **kwargs)

    def __iter__(self):
        for batch in super().__iter__():
            yield to_data(batch)
