"""Sources, sinks, sanitizers and views, as tables (extended from config, not by new branches).

Names are qualified names as ``names.py`` resolves them: ``import numpy as np; np.copy`` is
``numpy.copy``. Method tables hold bare method names (the receiver's type is unknown to an ast
analysis); they are only consulted on values already tainted, which keeps them precise.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Mapping

# --- sources ------------------------------------------------------------------------------------

# Object-store reads: a `ray.get` not traced to a compiled graph.
RAY_GET = frozenset({"ray.get", "ray.worker.get", "ray._private.worker.get"})
# `ready, pending = ray.wait(refs, num_returns=n)`: both lists hold refs of its first argument,
# nothing of its others.
RAY_WAIT = frozenset({"ray.wait"})

# `X.experimental_compile()` makes a compiled graph; its `execute` returns CompiledDAGRef(s).
COMPILE_METHODS = frozenset({"experimental_compile"})
EXECUTE_METHODS = frozenset({"execute"})
EXECUTE_ASYNC_METHODS = frozenset({"execute_async"})

# Annotation names that mark a compiled graph or a compiled-graph ref (last component).
COMPILED_DAG_TYPES = frozenset({"CompiledDAG"})
COMPILED_REF_TYPES = frozenset({"CompiledDAGRef", "CompiledDAGFuture"})
# Plain object refs: an annotation admitting them as well is not evidence of a channel read.
PLAIN_REF_TYPES = frozenset({"ObjectRef", "ObjectRefGenerator", "DynamicObjectRefGenerator"})

# Async and threaded forms of `ray.get`: `asyncio.to_thread(ray.get, ref)` and
# `loop.run_in_executor(executor, ray.get, ref)` read when awaited.
TO_THREAD_CALLS = frozenset({"asyncio.to_thread"})
EXECUTOR_METHODS = frozenset({"run_in_executor"})
# `ref.future()` is a concurrent future of the ref: `.result()` reads, `wrap_future` awaits.
REF_FUTURE_METHODS = frozenset({"future"})
FUTURE_RESULT_METHODS = frozenset({"result"})
# `ray.util.queue.Queue`: a queue in an actor; its reads hand back stored values.
RAY_QUEUES = frozenset({"ray.util.queue.Queue"})
QUEUE_READ_METHODS = frozenset({"get", "get_nowait", "get_nowait_batch"})
QUEUE_ASYNC_READ_METHODS = frozenset({"get_async"})
# `gen.__anext__()` of an ObjectRefGenerator: awaiting it gives the next ref.
NEXT_REF_METHODS = frozenset({"__anext__"})

# `ray.remote`: `@ray.remote`, `ray.remote(f)`, `ray.remote(num_gpus=1)(f)` make remote callables.
RAY_REMOTE = "ray.remote"
# Decorators whose functions (and classes' methods) run in a Ray worker, their results
# serialised back to the caller: `@ray.remote`, Serve's `@serve.deployment` (its replicas are
# actors).
SERIALIZING_DECORATORS = frozenset({RAY_REMOTE, "ray.serve.deployment", "ray.serve.api.deployment"})
# `typing.cast(T, value)`: the value, of the type T names (as an annotation would say).
CAST_CALLS = frozenset({"typing.cast", "typing_extensions.cast"})
# Calls that run a coroutine to its end and give its result (what awaiting it gives).
RUN_COROUTINE_CALLS = frozenset({"asyncio.run"})
RUN_COROUTINE_METHODS = frozenset({"run_until_complete"})
# Lazy module loaders by last name: `ray = LazyLoader("ray")` binds the module ray (as
# data-juicer, vLLM and TensorFlow spell it).
LAZY_IMPORTERS = frozenset({"LazyLoader", "lazy_import"})
# Awaiting these gives the awaitables passed in (`done, pending` sets of tasks), not what
# they compute: no read (`task.result()` of one is).
WAIT_CALLS = frozenset({"asyncio.wait"})
# Calls that make refs and handles, never views of their arguments: `f.remote(...)` and
# `handle.m.remote(...)` return refs (what reading one returns is the callee's declared return
# type); `.options(...)` returns the same remote callable; `ray.put(x)` a ref.
REMOTE_METHODS = frozenset({"remote"})
OPTIONS_METHODS = frozenset({"options"})
HANDLE_CALLS = frozenset({"ray.put"})
# Builtins whose result holds the refs of their argument as they are (`for i, ref in
# enumerate(dag.execute(x))` still reads the channel).
REF_PASSING_BUILTINS = frozenset(
    {"enumerate", "zip", "reversed", "list", "tuple", "iter", "sorted"}
)
# `actor.m.bind(...)` / `f.bind(...)`: a compiled-graph node whose output is what `m` returns.
BIND_METHODS = frozenset({"bind"})

# --- payload evidence (annotations) --------------------------------------------------------------

# Types whose values hold array memory Ray deserialises zero-copy, by qualified name as the
# module's imports resolve them (`np.ndarray` after `import numpy as np` is `numpy.ndarray`):
# so `jax.Array` or a project's own `Table` class is not taken for pyarrow's.
ZERO_COPY_ARRAY_TYPES = frozenset(
    {
        "numpy.ndarray",
        "numpy.matrix",
        "numpy.recarray",
        "numpy.ma.MaskedArray",
        "numpy.typing.NDArray",
        "numpy.typing.ArrayLike",
        "pandas.DataFrame",
        "pandas.Series",
        "pandas.Index",
        "pandas.core.frame.DataFrame",
        "pandas.core.series.Series",
        "pyarrow.Array",
        "pyarrow.ChunkedArray",
        "pyarrow.Table",
        "pyarrow.RecordBatch",
        "pyarrow.lib.Array",
        "pyarrow.lib.ChunkedArray",
        "pyarrow.lib.Table",
        "pyarrow.lib.RecordBatch",
    }
)
# The same types by their last component: used only for a name that does not resolve through
# an import (a string annotation naming a type the module never imports, a star import).
ZERO_COPY_ARRAY_NAMES = frozenset(
    {"ndarray", "NDArray", "ArrayLike", "DataFrame", "Series", "Array", "ChunkedArray", "Table"}
    | {"RecordBatch"}
)
# torch tensors: Ray 2.60 copies them (pickles CPU tensors; compiled-graph channels rebuild them
# with `torch.tensor(array)`) unless RAY_ENABLE_ZERO_COPY_TORCH_TENSORS is set, which the
# `zero-copy-torch` option mirrors. Array-free by default, array evidence with the option.
TORCH_TYPES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
TORCH_NAMES = frozenset({"Tensor"})
# Types that never hold arrays: a read annotated only with these is not reported.
ARRAY_FREE_TYPES = frozenset(
    {
        "int",
        "str",
        "bool",
        "float",
        "complex",
        "bytes",
        "bytearray",
        "None",
        "NoneType",
        "Literal",
        "ObjectRef",
        "ActorHandle",
        "Enum",
        "IntEnum",
        "StrEnum",
        "UUID",
        "Path",
        "datetime",
        "timedelta",
        "date",
    }
)
# The bases that make a class an enumeration. Ray pickles an enum member by its value and
# unpickling looks the class's own member up (`Enum.__reduce_ex__`): what comes back is the
# member the class defines, never a view of the object store, so an enum holds no buffer.
ENUM_BASES = frozenset(
    {"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag", "enum.ReprEnum"}
)
# Library types, by qualified name, that hold no zero-copy buffer once Ray hands them back:
# xgboost's booster pickles its model as bytes (in-band, copied) and loads it into a new
# native handle; a pyarrow schema, type or field is rebuilt from its description. (Not
# lightgbm's booster: it keeps `__inner_predict_buffer`, numpy arrays a custom `feval` fills,
# which come back zero-copy, measured with Ray 2.60.)
ARRAY_FREE_LIBRARY_TYPES = frozenset(
    {
        "xgboost.Booster",
        "xgboost.core.Booster",
        "pyarrow.Schema",
        "pyarrow.lib.Schema",
        "pyarrow.DataType",
        "pyarrow.lib.DataType",
        "pyarrow.Field",
        "pyarrow.lib.Field",
    }
)
# numpy's scalar types: a scalar pickles its bytes in band (`numpy.core.multiarray.scalar`),
# so what Ray hands back is a new object, never a view of the object store.
NUMPY_SCALAR_TYPES = frozenset(
    f"numpy.{name}"
    for name in (
        "bool_ int8 int16 int32 int64 uint8 uint16 uint32 uint64 intc intp float16 float32"
        " float64 double single half longdouble complex64 complex128 str_ bytes_ datetime64"
        " timedelta64 integer floating number"
    ).split()
)
# Generic wrappers that are neutral: evidence comes from their arguments.
NEUTRAL_GENERICS = frozenset(
    {
        "Optional",
        "Union",
        "list",
        "List",
        "dict",
        "Dict",
        "tuple",
        "Tuple",
        "set",
        "Set",
        "frozenset",
        "FrozenSet",
        "Sequence",
        "Mapping",
        "Iterable",
        "Iterator",
        "Collection",
        "MutableMapping",
        "MutableSequence",
        "Deque",
        "deque",
        "DefaultDict",
        "defaultdict",
        "OrderedDict",
        "Annotated",
        "Final",
        "ClassVar",
    }
)

# Calls whose result holds no array, by qualified name (a method of a call's result written
# `f().method`), with the type they give: a remote function returning
# `ray.util.get_node_ip_address()` or `(socket.gethostname(), os.getpid())` evidently returns
# scalars, as `return len(x)` does.
SCALAR_RESULT_CALLS: Mapping[str, str] = types.MappingProxyType(
    {
        "socket.gethostname": "str",
        "socket.getfqdn": "str",
        "os.getpid": "int",
        "platform.node": "str",
        "time.time": "float",
        "ray.get_gpu_ids": "list[int | str]",
        "ray.util.get_node_ip_address": "str",
        "ray._private.services.get_node_ip_address": "str",
        "ray.get_runtime_context().get_node_id": "str",
        "ray.get_runtime_context().get_job_id": "str",
        "ray.get_runtime_context().get_actor_id": "str | None",
        "ray.get_runtime_context().get_task_id": "str | None",
        "ray.get_runtime_context().get_worker_id": "str",
        "ray.get_runtime_context().get_accelerator_ids": "dict[str, list[str]]",
    }
)

# Generic types that stand for what they eventually give, their last argument: a future, an
# awaitable, a coroutine's return type. (`ObjectRef[X]` is a ref, which holds no buffer: its
# payload X is what reading it gives, carried with the ref.)
RESULT_WRAPPERS = frozenset({"Future", "Awaitable", "Coroutine", "Task"})

# --- sanitizers ---------------------------------------------------------------------------------

# The bundled helpers: any function of these names, from any module, detaches (vLLM ships its
# own `detach_zero_copy_from_model_runner_output`).
HELPER_NAMES = frozenset({"detach_zero_copy_from_model_runner_output", "detach_zero_copy"})

# Calls whose result is a copy (detached).
COPY_CALLS = frozenset(
    {
        "numpy.array",  # copies unless copy=False
        "numpy.copy",
        "copy.deepcopy",
        "torch.tensor",
        "torch.clone",
        "pickle.loads",
        "json.loads",
        "json.dumps",
    }
)
# Builtins whose result never holds the argument's memory.
CLEAN_BUILTINS = frozenset(
    {
        "len",
        "int",
        "float",
        "bool",
        "str",
        "repr",
        "bytes",
        "hash",
        "id",
        "isinstance",
        "issubclass",
        "callable",
        "print",
        "format",
        "abs",
        "round",
        "sum",
        "any",
        "all",
        "ord",
        "chr",
        "hasattr",
        "type",
        "divmod",
        "pow",
        "bin",
        "hex",
        "oct",
        "ascii",
        "range",
    }
)
# Methods whose result is detached from the receiver.
COPY_METHODS = frozenset(
    {
        "copy",
        "tolist",
        "flatten",
        "tobytes",
        "item",
        "astype",
        "clone",
        "numpy_copy",
        "sum",
        "mean",
        "std",
        "var",
        "min",
        "max",
        "argmax",
        "argmin",
        "argsort",
        "all",
        "any",
        "cumsum",
        "cumprod",
        "prod",
        "dot",
        "round",
        "clip",
        "nonzero",
        "__len__",
        "to_list",
        "to_pylist",
        "to_pydict",
        "deepcopy",
        "count",
        "index",
        "startswith",
        "endswith",
        "format",
        "join",
        "split",
        "strip",
        "encode",
        "decode",
        "is_set",
        "done",
    }
)
# Attributes of an array-like value that are plain data (never the buffer).
CLEAN_ATTRIBUTES = frozenset(
    {
        # numpy's metadata
        "shape",
        "dtype",
        "ndim",
        "size",
        "nbytes",
        "itemsize",
        "strides",
        "flags",
        "__class__",
        # pyarrow's (a table's or record batch's schema holds types and names, no buffer)
        "num_rows",
        "num_columns",
        "column_names",
        "schema",
    }
)

# numpy functions that return views (everything else in numpy returns a new array or scalar).
NUMPY_VIEW_FUNCTIONS = frozenset(
    {
        "asarray",
        "asanyarray",
        "ascontiguousarray",
        "asfortranarray",
        "reshape",
        "ravel",
        "transpose",
        "squeeze",
        "expand_dims",
        "atleast_1d",
        "atleast_2d",
        "atleast_3d",
        "broadcast_to",
        "broadcast_arrays",
        "split",
        "array_split",
        "hsplit",
        "vsplit",
        "dsplit",
        "swapaxes",
        "moveaxis",
        "rollaxis",
        "frombuffer",
        "diagonal",
        "real",
        "imag",
        "asmatrix",
        "flip",
        "fliplr",
        "flipud",
        "rot90",
    }
)
# torch functions that share memory with a numpy argument.
TORCH_VIEW_FUNCTIONS = frozenset({"from_numpy", "as_tensor", "asarray", "frombuffer"})

# --- sinks --------------------------------------------------------------------------------------

# `c.<method>(value)`: the value goes into a container or channel (SHM103).
CONTAINER_METHODS = frozenset(
    {"append", "extend", "insert", "appendleft", "extendleft", "add", "update", "setdefault"}
)
# Channels and futures: the value leaves the iteration whatever the receiver is (SHM103).
CHANNEL_METHODS = frozenset({"put", "put_nowait", "set_result", "send", "send_nowait"})
# Functions that push into their first argument (SHM103).
CONTAINER_FUNCTIONS = frozenset({"heapq.heappush", "heapq.heappushpop", "heapq.heapreplace"})


# --- the library rule the dataflow and the fresh-result test share ---------------------------


def copy_false(call: ast.Call) -> bool:
    """``copy=False`` (or ``None``) passed: the result may be the input itself."""
    return any(
        k.arg == "copy" and isinstance(k.value, ast.Constant) and k.value.value in (False, None)
        for k in call.keywords
    )


def library_copies(qualified: str, call: ast.Call) -> bool | None:
    """Whether ``call`` of the library function ``qualified`` gives a new value (True) or a
    view of its arguments (False), by the tables above; None: no function they know."""
    if qualified in COPY_CALLS:
        return not (qualified == "numpy.array" and copy_false(call))
    if qualified in CLEAN_BUILTINS:
        return True
    head, _, last = qualified.rpartition(".")
    if head == "numpy" or head.startswith("numpy."):
        return last not in NUMPY_VIEW_FUNCTIONS
    if head == "torch":
        return last not in TORCH_VIEW_FUNCTIONS
    return None
