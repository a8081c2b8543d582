"""Persisted documents: a request may name its document by a hash instead of sending it
(docs/frontends.md, "Persisted documents").

- Apollo's automatic persisted queries (APQ): `extensions.persistedQuery {version: 1,
  sha256Hash}`. A hash the server does not know, sent alone, is answered with the error
  `PERSISTED_QUERY_NOT_FOUND` (message `PersistedQueryNotFound`, as Apollo Client's and
  urql's links expect): the link sends it again with its document, which registers it
  once its hash is checked (a document whose sha256 is not the hash is refused
  `persisted_document_mismatch`, and nothing runs). Registered documents are kept in
  each process, the most recently used `REGISTERED` of them and `REGISTERED_CHARACTERS`
  characters in all (an LRU; anyone may register, so it is bounded by size too): a client
  whose hash was forgotten, or that reaches another process, is asked again.
- Trusted documents: `--trusted-documents FILE`, a JSON object of sha256 hash → document,
  as relay-compiler's `persistConfig` (with `"algorithm": "SHA256"`) and GraphQL Code
  Generator's persisted documents (with `hashAlgorithm: "sha256"`) write them; a key is
  `sha256:<hex>` or bare hex, and each document's sha256 must be its key (a file that
  breaks this stops `serve`). The server's own documents (graphql/, the board's, the Python
  client's: `MANIFEST`, written by scripts/documents.py; and each declared task verb's form
  document, `TaskVerb.document`) are always known. A request names
  one by `documentId` (`sha256:<hex>`, the GraphQL over HTTP specification's
  persisted-documents appendix), `doc_id` (Relay's, bare hex or prefixed) or the APQ hash.
- `--trusted-documents-only`: a request runs only a document of those manifests: one named
  by its id, or sent in full when its text is exactly a manifest's document (so clients
  that send the text, like the board and the Python client, need no change). Any other
  document is refused `trusted_documents_only`, an APQ registration included; nothing runs.

Each refusal is an error with its own code, before anything runs: an id that is not
`sha256:` and 64 hexadecimal digits (`persisted_document_invalid`), an id nobody knows
(`persisted_document_not_found`), a document and an id that name different documents
(`persisted_document_mismatch`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.api.verbs import form_documents
from app.domain.errors import ProtocolError

MANIFEST = Path(__file__).with_name("documents.json")  # the server's own (scripts/documents.py)
REGISTERED = 1000  # APQ documents kept per process (most recently used)
REGISTERED_CHARACTERS = 4_000_000  # and at most so many characters of them in all
_HEX = re.compile(r"[0-9a-f]{64}")


class Refusal(ProtocolError):
    """A persisted document's refusal."""


class NotFound(Refusal):
    """An APQ hash the server does not know (yet): the client sends its document."""

    code = "PERSISTED_QUERY_NOT_FOUND"


class DocumentNotFound(Refusal):
    code = "persisted_document_not_found"


class InvalidId(Refusal):
    code = "persisted_document_invalid"


class Mismatch(Refusal):
    code = "persisted_document_mismatch"


class OnlyTrusted(Refusal):
    code = "trusted_documents_only"


class ManifestError(ValueError):
    """A --trusted-documents file that cannot be used (named in the message)."""


def sha256(document: str) -> str:
    return hashlib.sha256(document.encode()).hexdigest()


def load(path: Path) -> dict[str, str]:
    """A manifest: hash (bare hex) → document; ManifestError says what is wrong with it."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ManifestError(f"--trusted-documents {path}: {error}") from error
    if not isinstance(entries, dict):
        raise ManifestError(f"--trusted-documents {path}: not a JSON object of hash → document")
    documents = {}
    for key, document in entries.items():
        digest = key.removeprefix("sha256:")
        if not _HEX.fullmatch(digest) or not isinstance(document, str):
            raise ManifestError(
                f"--trusted-documents {path}: {key[:80]!r} is not a sha256 hash (64 lowercase"
                " hexadecimal digits, bare or after sha256:) of a document string (GraphQL"
                " Code Generator: persistedDocuments' hashAlgorithm must be sha256)"
            )
        if sha256(document) != digest:
            raise ManifestError(
                f"--trusted-documents {path}: the document of {key[:80]!r} has another sha256"
                " (relay-compiler: persistConfig's algorithm must be SHA256)"
            )
        documents[digest] = document
    return documents


@dataclass
class Documents:
    """What this process knows: the trusted documents, the APQ registrations, the mode."""

    trusted: Mapping[str, str] = field(default_factory=dict)
    only: bool = False
    registered: OrderedDict[str, str] = field(default_factory=OrderedDict)
    characters: int = 0  # of the registered documents

    @classmethod
    def of(cls, given: str | None, only: bool) -> Documents:
        """The server's manifest and the one `given` (--trusted-documents); `only`:
        --trusted-documents-only."""
        trusted = load(MANIFEST) if MANIFEST.exists() else {}
        trusted = {**trusted, **{sha256(d): d for d in form_documents()}}
        if given:
            trusted = {**trusted, **load(Path(given))}
        return cls(trusted, only)

    def named_in(self, body: bytes) -> bool:
        """Whether a JSON body may name a document id (a cheap look before parsing it again)."""
        return b"documentId" in body or b"doc_id" in body

    def resolve(self, query: object, extensions: object, document_id: object) -> str | None:
        """The document a request runs (None: the request has none; Strawberry refuses it),
        or a refusal (a ProtocolError) raised before anything runs."""
        persisted = extensions.get("persistedQuery") if isinstance(extensions, dict) else None
        if persisted is None and document_id is None:
            if self.only and isinstance(query, str) and sha256(query) not in self.trusted:
                raise OnlyTrusted(
                    "this server runs only its trusted documents (--trusted-documents-only):"
                    " send a documentId, or a document of its manifests"
                )
            return query if isinstance(query, str) else None
        apq = persisted is not None
        digest = _apq_hash(persisted) if apq else _document_hash(document_id)
        if apq and document_id is not None and _document_hash(document_id) != digest:
            raise Mismatch("documentId and extensions.persistedQuery name different documents")
        if isinstance(query, str):
            if sha256(query) != digest:
                raise Mismatch(
                    f"the document sent does not have the sha256 {digest} its id names;"
                    " nothing was run"
                )
            if digest in self.trusted:
                return query
            if self.only:
                raise OnlyTrusted(
                    "this server runs only its trusted documents (--trusted-documents-only):"
                    " a document is not registered"
                )
            if apq:
                self._register(digest, query)
            return query
        known = self.trusted.get(digest)
        if known is None and not self.only:
            known = self.registered.get(digest)
            if known is not None:
                self.registered.move_to_end(digest)
        if known is not None:
            return known
        if apq and not self.only:
            raise NotFound("PersistedQueryNotFound")
        raise DocumentNotFound(f"no trusted document has the id sha256:{digest}")

    def _register(self, digest: str, document: str) -> None:
        if digest in self.registered:
            self.registered.move_to_end(digest)
            return
        self.registered[digest] = document
        self.characters += len(document)
        while len(self.registered) > REGISTERED or self.characters > REGISTERED_CHARACTERS:
            self.characters -= len(self.registered.popitem(last=False)[1])


def _apq_hash(persisted: object) -> str:
    if not isinstance(persisted, dict) or persisted.get("version") != 1:
        raise InvalidId("extensions.persistedQuery must be {version: 1, sha256Hash: <hex>}")
    return _hex(persisted.get("sha256Hash"), "extensions.persistedQuery.sha256Hash")


def _document_hash(document_id: object) -> str:
    if not isinstance(document_id, str) or ":" in document_id.removeprefix("sha256:"):
        raise InvalidId(
            f"documentId {str(document_id)[:80]!r} is not sha256:<64 hexadecimal digits>"
        )
    return _hex(document_id.removeprefix("sha256:"), "documentId")


def _hex(value: object, name: str) -> str:
    if not isinstance(value, str) or not _HEX.fullmatch(value.lower()):
        raise InvalidId(f"{name} {str(value)[:80]!r} is not a sha256 hash (64 hexadecimal digits)")
    return value.lower()


def ids_of(data: Mapping[str, Any]) -> object:
    """A request's document id: `documentId`, else Relay's `doc_id`, else None."""
    return data.get("documentId", data.get("doc_id"))
