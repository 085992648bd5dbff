//! The listing methods: `server/discover`, `tools/list`, `prompts/list`, `resources/list`
//! and `resources/templates/list`, each one page with its caching hints.

#[cfg(feature = "resources")]
use super::method::{serves_resources, serves_subscriptions};
use super::{App, Engine};
use crate::wire::json::Value;
use crate::wire::write::Writer;

pub(super) fn open_result(w: &mut Writer<'_>, id: Value<'_>) {
    super::response::write_head(w, Some(id));
    w.key("result")
        .begin_object()
        .key("resultType")
        .string("complete");
}

pub(super) fn discover<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("supportedVersions");
    super::versions::write_versions(w);
    w.key("capabilities").begin_object();
    w.key("tools").begin_object().end_object();
    if !eng.app.prompts().is_empty() {
        w.key("prompts").begin_object().end_object();
    }
    #[cfg(feature = "resources")]
    if serves_resources(&eng.app) {
        w.key("resources").begin_object();
        if serves_subscriptions(&eng.app) {
            w.key("subscribe").bool(true);
        }
        w.end_object();
    }
    if eng.app.serves_completions() {
        w.key("completions").begin_object().end_object();
    }
    w.end_object();
    if let Some(i) = eng.app.info().instructions {
        w.key("instructions").string(i);
    }
    cache_hints(eng, w);
}

pub(super) fn cache_hints<A: App>(eng: &Engine<A>, w: &mut Writer<'_>) {
    w.key("ttlMs")
        .int(eng.config.list_ttl_ms.into())
        .key("cacheScope")
        .string("public");
}

pub(super) fn tools_list<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("tools").begin_array();
    for t in eng.app.tools().iter().map(|t| &t.info) {
        w.begin_object()
            .key("name")
            .string(t.name)
            .key("title")
            .string(t.title);
        w.key("description").string(t.description);
        w.key("inputSchema").raw(t.input_schema.as_bytes());
        w.key("annotations")
            .begin_object()
            .key("title")
            .string(t.title);
        w.key("readOnlyHint").bool(t.read_only);
        if !t.read_only {
            w.key("destructiveHint")
                .bool(t.destructive)
                .key("idempotentHint")
                .bool(t.idempotent);
        }
        w.key("openWorldHint").bool(false).end_object();
        if let Some(meta) = t.meta {
            w.key("_meta").raw(meta.as_bytes());
        }
        w.end_object();
    }
    w.end_array();
    cache_hints(eng, w);
}

pub(super) fn prompts_list<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("prompts").begin_array();
    for p in eng.app.prompts() {
        w.begin_object()
            .key("name")
            .string(p.name)
            .key("title")
            .string(p.title);
        w.key("description").string(p.description);
        if !p.arguments.is_empty() {
            w.key("arguments").begin_array();
            for a in p.arguments {
                w.begin_object().key("name").string(a.name);
                w.key("description").string(a.description);
                w.key("required").bool(a.required).end_object();
            }
            w.end_array();
        }
        w.end_object();
    }
    w.end_array();
    cache_hints(eng, w);
}

#[cfg(feature = "resources")]
pub(super) fn resources_list<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("resources").begin_array();
    for r in eng.app.resources() {
        w.begin_object()
            .key("uri")
            .string(r.uri)
            .key("name")
            .string(r.name);
        w.key("title")
            .string(r.title)
            .key("description")
            .string(r.description);
        w.key("mimeType").string(r.mime_type).end_object();
    }
    w.end_array();
    cache_hints(eng, w);
}

#[cfg(feature = "resources")]
pub(super) fn templates_list<A: App>(eng: &Engine<A>, w: &mut Writer<'_>, id: Value<'_>) {
    open_result(w, id);
    w.key("resourceTemplates").begin_array();
    for t in eng.app.resource_templates() {
        w.begin_object().key("uriTemplate").string(t.uri_template);
        w.key("name").string(t.name).key("title").string(t.title);
        w.key("description").string(t.description);
        w.key("mimeType").string(t.mime_type).end_object();
    }
    w.end_array();
    cache_hints(eng, w);
}
