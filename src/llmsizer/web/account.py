"""The account page: the form, its live sizing (htmx posts the form; the results panel is
swapped), downloads (YAML, JSON, workbook, PDF with progress) and uploads (a YAML, or a
workbook finance edited, with the ``--diff`` lines). Every request carries the whole form:
the server keeps no account between requests."""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import UploadFile as StarletteUpload

from ..base.errors import InputError, LlmsizerError
from ..base.textsafe import printable
from ..documents.xlsxsafe import MAX_WORKBOOK_BYTES
from ..inputs.loader import load_from_text
from ..inputs.yamlfile import MAX_BYTES as MAX_YAML_BYTES
from ..sizing.results import slugify
from . import archetypes, fields, forms
from .jobs import MEDIA, Busy, render_document, reread_workbook
from .render import ENV, page
from .service import FORM_SOURCE, Sized, catalog, size_text, syntax_words, upload_words, web_words

router = APIRouter()


@dataclass(frozen=True)
class Submitted:
    """A submitted form: the requirements data and the config.json each workload carries."""

    data: dict[str, Any]
    found: dict[int, tuple[str, str]]  # workload index -> (model path, config.json text)

    @property
    def yaml(self) -> str:
        return forms.to_yaml(self.data)

    @property
    def configs(self) -> forms.Configs:
        return forms.configs_of(self.found)


# Up to ~40 fields a workload, 50 workloads (the schema's limit), and the account's own:
# Starlette's default of 1,000 fields refused every update of an account past ~23 workloads
# ("Too many fields"). The body limit (security.py) bounds the parsing either way.
MAX_FIELDS = forms.MAX_WORKLOADS * 100 + 1_000


async def _form(request: Request) -> Any:
    """The posted form, parsed once (Starlette keeps it for later calls)."""
    return await request.form(max_fields=MAX_FIELDS)


async def _submitted(request: Request) -> Submitted:
    form = await _form(request)
    items = [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
    return Submitted(forms.form_to_data(items), forms.form_configs(items))


def _context(data: dict[str, Any], sized: Sized, **extra: Any) -> dict[str, Any]:
    values = forms.form_values(data)
    return {"values": values, "workloads": max(1, forms.workload_count(values)), "sized": sized,
            "fields": fields, "catalog": catalog(), "archetypes": archetypes.ARCHETYPES,
            "upload_error": None, "upload_note": None, "diff": None, "warnings": (), "found": {}, **extra}


def _account_page(request: Request, data: dict[str, Any], status: int = 200,
                  found: dict[int, tuple[str, str]] | None = None,
                  **extra: Any) -> HTMLResponse:
    found = found or {}
    sized = size_text(forms.to_yaml(data), configs=forms.configs_of(found))
    return page(request, "account.html.j2", status,
                **_context(data, sized, found=found, names=_config_names(sized, found), **extra))


def _config_names(sized: Sized, found: dict[int, tuple[str, str]]) -> dict[str, str]:
    """An uploaded model by its name (as the PDF names it), never its path."""
    if sized.result is None:
        return {}
    names = {w.model: w.model_name for w in sized.result.workloads}
    return {path: names.get(path, path) for path, _ in found.values()}


@router.get("/", response_class=HTMLResponse)
def home(request: Request, start: str = "chat") -> HTMLResponse:
    key = start if start in archetypes.BY_KEY else "chat"
    return _account_page(request, archetypes.requirements(key))


def update_html(yaml_text: str, configs: forms.Configs = ()) -> str:
    """The results panel of a live update: the numbers, without the charts (they follow in
    the page's second request, drawn by :class:`.jobs.Drawer`)."""
    return ENV.get_template("_results.html.j2").render(
        sized=size_text(yaml_text, configs=configs), forms=forms)


@router.post("/size", response_class=HTMLResponse)
async def live(request: Request) -> HTMLResponse:
    from starlette.concurrency import run_in_threadpool

    sub = await _submitted(request)
    return HTMLResponse(await run_in_threadpool(update_html, sub.yaml, sub.configs))


@router.post("/charts", response_class=HTMLResponse)
async def live_charts(request: Request) -> HTMLResponse:
    """The charts of the form's sizing: the page asks for them once the numbers are shown;
    they are drawn in their own process, so drawing never slows another user's numbers."""
    sub = await _submitted(request)
    return HTMLResponse(await request.app.state.drawer.draw(sub.yaml, sub.configs))


@router.get("/workload", response_class=HTMLResponse)
def new_workload(request: Request, index: int = 0, start: str = "chat") -> HTMLResponse:
    key = start if start in archetypes.BY_KEY else "chat"
    index = max(0, min(index, forms.MAX_WORKLOADS * 4 - 1))
    added = archetypes.workload(key)
    if index > 0:  # a name of its own: two "Chat API" stopped the sizing the moment the button
        # was pressed ("two workloads are named 'Chat API'"; review round 20)
        added["name"] = f"{added['name']} ({index + 1})"
    values = forms.form_values({"workloads": [{}] * index + [added]})
    return page(request, "_workload.html.j2", i=index, values=values, fields=fields,
                catalog=catalog())


def _attachment(body: bytes | str, name: str, media: str) -> Response:
    return Response(body, media_type=media,
                    headers={"content-disposition": content_disposition(name)})


def content_disposition(name: str) -> str:
    """``attachment`` with the file's name (RFC 6266): an ASCII ``filename`` every browser
    reads and, for a name in another script, ``filename*=UTF-8''`` percent-encoded (RFC
    5987), which browsers prefer. The name is a slug and an extension; the header is still
    built so that no quote, backslash, CR/LF or non-ASCII byte can reach it."""
    from urllib.parse import quote

    stem, _, ext = name.rpartition(".") if "." in name else (name, "", "")
    fallback = re.sub(r"[^A-Za-z0-9-]+", "-", stem).strip("-") or "account"
    ext = re.sub(r"[^A-Za-z0-9]+", "", ext)
    fallback += f".{ext}" if ext else ""
    if name == fallback:
        return f'attachment; filename="{fallback}"'
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def _stem(data: dict[str, Any]) -> str:
    account = data.get("account")
    name = account.get("name") if isinstance(account, dict) else None
    return slugify(name) if isinstance(name, str) and name.strip() else "account"


@router.post("/download/yaml")
async def download_yaml(request: Request) -> Response:
    """The requirements YAML; with an uploaded config.json, a zip of the YAML and the
    config.json where the YAML names it, so `llmsizer size` on the unpacked YAML gives the
    same JSON."""
    sub = await _submitted(request)
    stem = _stem(sub.data)
    if not sub.configs:
        return _attachment(sub.yaml, f"{stem}.yaml", "application/yaml")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{stem}.yaml", sub.yaml)
        for path, text in sub.configs:
            z.writestr(path, text)
    return _attachment(buf.getvalue(), f"{stem}.zip", "application/zip")


@router.post("/download/json")
async def download_json(request: Request) -> Response:
    sub = await _submitted(request)
    data = sub.data
    sized = size_text(sub.yaml, configs=sub.configs)
    if sized.result is None:
        return _not_written(request, sub, "the results JSON", sized.error or "")
    return _attachment(sized.result.to_json(), f"{_stem(data)}.json", MEDIA["json"])


def _not_written(request: Request, sub: Submitted, what: str, why: str,
                 status: int = 400) -> HTMLResponse:
    """A download that cannot be written: the account page again with the form as it was
    sent and the reason on top; an error page in its place sent the user "back" to a fresh
    form (no page is cached), losing what was typed."""
    return _account_page(request, sub.data, status, found=sub.found,
                         upload_error=f"{what} was not written: {why}")


def _problem(request: Request, message: str, status: int = 400) -> HTMLResponse:
    return page(request, "problem.html.j2", status, message=message)


async def _unsized(sub: Submitted) -> str | None:
    """Why the form does not size, in the results panel's words (the field's label, not the
    line of a generated YAML the user never saw), or None: a document is not started."""
    from starlette.concurrency import run_in_threadpool

    sized = await run_in_threadpool(size_text, sub.yaml, FORM_SOURCE, sub.configs)
    return sized.error


@router.post("/download/xlsx")
async def download_xlsx(request: Request) -> Response:
    sub = await _submitted(request)
    pool = request.app.state.pool
    from starlette.concurrency import run_in_threadpool

    what = "the workbook"
    error = await _unsized(sub)
    if error:
        return _not_written(request, sub, what, error)
    try:
        stem, body = await run_in_threadpool(pool.run, "xlsx", render_document,
                                             sub.yaml, FORM_SOURCE, "xlsx", sub.configs)
    except Busy as exc:
        return _not_written(request, sub, what, str(exc), 503)
    except LlmsizerError as exc:
        return _not_written(request, sub, what, str(exc))
    except TimeoutError:
        return _not_written(request, sub, what, "writing it took too long; try again", 503)
    return _attachment(body, f"{stem}.xlsx", MEDIA["xlsx"])


@router.post("/download/pdf", response_class=HTMLResponse)
async def start_pdf(request: Request) -> HTMLResponse:
    sub = await _submitted(request)
    error = await _unsized(sub)
    if error:
        return page(request, "_job.html.j2", job=None, message=error)
    try:
        job = request.app.state.pool.submit("pdf", render_document, sub.yaml,
                                            FORM_SOURCE, "pdf", sub.configs)
    except Busy as exc:
        return page(request, "_job.html.j2", job=None, message=str(exc))
    return page(request, "_job.html.j2", job=job, message=None)


@router.get("/jobs/{job_id}", response_class=HTMLResponse)
def job_state(request: Request, job_id: str) -> HTMLResponse:
    job = request.app.state.pool.get(job_id)
    if job is None:
        return page(request, "_job.html.j2", job=None, message="no such document (it expired); "
                    "press the button again")
    return page(request, "_job.html.j2", job=job, message=None)


@router.get("/jobs/{job_id}/file")
def job_file(request: Request, job_id: str) -> Response:
    job = request.app.state.pool.get(job_id)
    if job is None or job.state() != "done":
        return _problem(request, "no such document (it expired or failed)", 404)
    stem, body = job.future.result()
    return _attachment(body, f"{stem}.{job.kind}", MEDIA[job.kind])


async def _read_upload(file: StarletteUpload, limit: int) -> bytes:
    body = await file.read(limit + 1)
    if len(body) > limit:
        raise InputError(f"larger than {limit:,} bytes", file=printable(file.filename or "upload"))
    return body


async def _kept(request: Request) -> tuple[dict[str, Any], dict[int, tuple[str, str]]] | None:
    """The account form as it was when a file was sent (app.js copies its fields into the
    upload), so a file that cannot be read never costs what was typed; None without it."""
    form = await _form(request)
    items = [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
    if not any(k.startswith(("account.", "workloads[")) for k, _ in items):
        return None
    return forms.form_to_data(items), forms.form_configs(items)


async def _refused(request: Request, message: str, unread: str | None = None) -> HTMLResponse:
    """An upload that gave nothing: the form as it was, or the starting point when the upload
    did not carry it. ``unread``: the file of which nothing could be read; a note then says
    the form is not that file (its figures were taken for the file's own sizing)."""
    kept = await _kept(request)
    form = ("yours as it was" if kept is not None else
            f"the {archetypes.BY_KEY['chat'].title} starting point")
    note = unread and f"Nothing of {unread} could be read: the form below is {form}, not this file."
    data, found = kept if kept is not None else (archetypes.requirements("chat"), {})
    return _account_page(request, data, 400, found=found, upload_error=message,
                         upload_note=note)


async def _no_file(request: Request, what: str, button: str) -> HTMLResponse:
    """Open or Re-read pressed with no file chosen: the page again with one line that says
    what to do (FastAPI's own answer would be a JSON validation error)."""
    return await _refused(request, f"choose {what} first, then press {button}")


async def _file(request: Request) -> StarletteUpload | None:
    """The uploaded ``file``, read from the form as parsed here (a parameter of the route
    would have FastAPI parse it first, with the default field limit)."""
    file = (await _form(request)).get("file")
    return file if isinstance(file, StarletteUpload) and file.filename else None


@router.post("/upload/yaml", response_class=HTMLResponse)
async def upload_yaml(request: Request) -> HTMLResponse:
    file = await _file(request)
    if file is None:
        return await _no_file(request, "a requirements YAML file", "Open")
    name = printable((file.filename or "upload.yaml").rsplit("/", 1)[-1])[:100]
    try:
        text = await _read_upload(file, MAX_YAML_BYTES)
        from ..inputs.yamlsafe import load_text

        located = load_text(text, name)
        loaded = load_from_text(text, name, catalog())  # the CLI's checks, every one
    except InputError as exc:
        if "located" in locals() and isinstance(located.data, dict):
            data = {"schema_version": 1, **forms.form_to_data(
                _flat(forms.form_values(located.data)))}
            return _account_page(request, data, 400,
                                 upload_error=upload_words(exc, name, located.data),
                                 where=name)
        # nothing of the file could be read: the form is the user's (or the starting point)
        return await _refused(request, syntax_words(web_words(str(exc))), unread=name)
    # what the checks doubt (inputs/doubts.py) with the file's line, as `validate` prints it
    return _account_page(request, located.data, warnings=loaded.warnings,
                         upload_note=opened_note(name, located.data))


def opened_note(name: str, data: dict[str, Any]) -> str:
    """What a file that opened put in the form (review round 25: the page after Open looked
    as it did before it, nothing said the file was read or which account it held)."""
    told = data.get("account")
    account: dict[str, Any] = told if isinstance(told, dict) else {}
    workloads = [w for w in data.get("workloads") or [] if isinstance(w, dict)]
    names = [str(w.get("name", "")) for w in workloads[:3]]
    more = f" and {len(workloads) - 3} more" if len(workloads) > 3 else ""
    count = f"{len(workloads)} workload{'s' if len(workloads) != 1 else ''}"
    return (f"Opened {name}: {printable(str(account.get('name', '')))[:100]}, {count} "
            f"({printable(', '.join(names))}{more}). The form below is this file; change any "
            "field and the recommendation follows.")


@router.post("/upload/config", response_class=HTMLResponse)
async def upload_config(request: Request) -> HTMLResponse:
    """A Hugging Face config.json for one workload's model, sent with the whole form: its
    content is read by the CLI's reader (never a path), kept in the workload's hidden field,
    and the workload names it models/<model name>/config.json, where the downloaded
    requirements put it."""
    from ..inputs.modelconfig import MAX_CONFIG_BYTES, model_from_json

    form = await _form(request)
    items = [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
    which = str(form.get("config_for") or "")
    index = int(which) if which.isdigit() and int(which) < forms.MAX_WORKLOADS else -1
    upload = form.get(f"workloads[{index}].config_file")
    data, found = forms.form_to_data(items), forms.form_configs(items)
    if index < 0 or not isinstance(upload, StarletteUpload) or not upload.filename:
        return _account_page(request, data, 400, found=found,
                             upload_error="choose a config.json file, then press Use it")
    name = printable(upload.filename.rsplit("/", 1)[-1])[:100]
    try:
        raw = await _read_upload(upload, MAX_CONFIG_BYTES)
        model = model_from_json(raw, name)
        text = raw.decode("utf-8-sig")
    except (InputError, UnicodeDecodeError) as exc:
        message = str(exc) if isinstance(exc, InputError) else f"{name}: not UTF-8 text"
        return _account_page(request, data, 400, found=found, upload_error=message)
    workloads = data.get("workloads") or []
    if index >= len(workloads):
        return _account_page(request, data, 400, found=found,
                             upload_error="that workload is no longer in the form")
    path = forms.config_path(model.name)
    workloads[index]["model"] = path
    found = {**found, index: (path, text)}
    if len(found) > forms.MAX_CONFIGS:
        return _account_page(request, data, 400, found=forms.form_configs(items),
                             upload_error=f"at most {forms.MAX_CONFIGS} config.json models "
                                          "in one account here; use `llmsizer size FILE`")
    return _account_page(request, data, found=found)


def _flat(values: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for k, v in values.items():
        out += [(k, x) for x in v] if isinstance(v, list) else [(k, v)]
    return out


@router.post("/upload/workbook", response_class=HTMLResponse)
async def upload_workbook(request: Request) -> HTMLResponse:
    from starlette.concurrency import run_in_threadpool

    file = await _file(request)
    if file is None:
        return await _no_file(request, "a workbook (.xlsx) written by llmsizer", "Re-read")
    name = printable((file.filename or "upload.xlsx").rsplit("/", 1)[-1])[:100]
    try:
        body = await _read_upload(file, MAX_WORKBOOK_BYTES)
        out = await run_in_threadpool(request.app.state.pool.run, "reread", reread_workbook,
                                      body, name)
    except (LlmsizerError, Busy, TimeoutError) as exc:
        message = str(exc) if not isinstance(exc, TimeoutError) else "re-reading took too long"
        return await _refused(request, message)
    return _account_page(request, out["requirements"], diff=out["diff"],
                         warnings=out["warnings"])


@router.post("/debugger", response_class=HTMLResponse)
async def debugger(request: Request) -> HTMLResponse:
    sub = await _submitted(request)
    sized = size_text(sub.yaml, configs=sub.configs)
    return page(request, "debugger.html.j2", sized=sized)
