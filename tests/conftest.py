"""Fixtures shared by the tests; plain helpers live in :mod:`tests.helpers`."""

import pytest

from tests.helpers import ORACLES


@pytest.fixture(params=sorted(ORACLES))
def oracle_name(request):
    return request.param
