"""seer.pyg: imports cleanly without PyG (and says what is missing); with PyG the
batches are Data objects a PyG layer trains on."""
import numpy as np
import pytest

import seer
import seer.pyg
from conftest import SHARED


def test_without_pyg_the_adapter_names_what_is_missing(graph):
    if seer.pyg.AVAILABLE:
        pytest.skip("torch_geometric is installed")
    with pytest.raises(ImportError, match="torch_geometric"):
        seer.pyg.NeighborLoader(graph["dataset"], fanouts=[5])


def test_batches_are_data_a_pyg_layer_trains_on(graph, tmp_path):
    pyg = pytest.importorskip("torch_geometric")
    import torch
    from torch_geometric.nn import SAGEConv

    loader = seer.pyg.NeighborLoader(graph["dataset"], **dict(SHARED, memory_budget="64M", budget_scope="data",
                                                            direct_io=False))
    conv = SAGEConv(47, 10)
    optimizer = torch.optim.Adam(conv.parameters(), lr=0.01)
    labels = np.fromfile(graph["dataset"] + "/labels.bin", dtype="<i4")
    count = 0
    for data in loader:
        assert isinstance(data, pyg.data.Data)
        assert np.array_equal(data.y[: data.batch_size].numpy(), labels[data.n_id[: data.batch_size].numpy()])
        assert sum(data.num_sampled_nodes) == data.num_nodes
        out = conv(data.x, data.edge_index)[: data.batch_size]
        loss = torch.nn.functional.cross_entropy(out, data.y[: data.batch_size])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        count += 1
    assert count == len(loader)
