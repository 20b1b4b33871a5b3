"""Type stubs of ``mldtypes._info``: ``finfo`` and ``iinfo`` (re-exported by ``mldtypes``)."""

from typing import Any

import numpy as np

class finfo(np.finfo[Any]):
    """Machine limits of a float format (ml_dtypes' values); NumPy's for other types."""
    def __new__(cls, dtype: Any) -> finfo: ...
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def smallest_normal(self) -> Any:
        """The smallest positive normal number, a scalar of the format itself."""
    @property
    def tiny(self) -> Any:
        """An alias of ``smallest_normal`` (NumPy's name)."""

class iinfo(np.iinfo[Any]):
    """Machine limits of a sub-byte integer; NumPy's for other types."""
    def __new__(cls, int_type: Any) -> iinfo: ...
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
