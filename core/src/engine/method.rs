//! The methods the engine knows: each one's wire name, and whether an app serves it.

use super::App;
use crate::wire::json::Value;

/// A request method the engine knows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Discover,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    #[cfg(feature = "resources")]
    ResourcesList,
    #[cfg(feature = "resources")]
    TemplatesList,
    #[cfg(feature = "resources")]
    ResourcesRead,
    Complete,
    #[cfg(feature = "resources")]
    Listen,
}

impl Method {
    /// The method a request's `method` member names, if the engine knows it.
    pub(super) fn of(name: Value<'_>) -> Option<Method> {
        [
            ("server/discover", Method::Discover),
            ("tools/list", Method::ToolsList),
            ("tools/call", Method::ToolsCall),
            ("prompts/list", Method::PromptsList),
            ("prompts/get", Method::PromptsGet),
            #[cfg(feature = "resources")]
            ("resources/list", Method::ResourcesList),
            #[cfg(feature = "resources")]
            ("resources/templates/list", Method::TemplatesList),
            #[cfg(feature = "resources")]
            ("resources/read", Method::ResourcesRead),
            ("completion/complete", Method::Complete),
            #[cfg(feature = "resources")]
            ("subscriptions/listen", Method::Listen),
        ]
        .into_iter()
        .find(|(n, _)| name.eq_str(n))
        .map(|(_, m)| m)
    }

    /// Whether the app serves this method (what discover advertises, and nothing more).
    pub(super) fn served<A: App>(self, app: &A) -> bool {
        match self {
            Method::Discover | Method::ToolsList | Method::ToolsCall => true,
            Method::PromptsList | Method::PromptsGet => !app.prompts().is_empty(),
            #[cfg(feature = "resources")]
            Method::ResourcesList | Method::TemplatesList | Method::ResourcesRead => {
                serves_resources(app)
            }
            Method::Complete => app.serves_completions(),
            #[cfg(feature = "resources")]
            Method::Listen => serves_subscriptions(app),
        }
    }
}

/// Whether the app has resources or templates to serve (the three resource methods are
/// served only then).
#[cfg(feature = "resources")]
pub(super) fn serves_resources<A: App>(app: &A) -> bool {
    !app.resources().is_empty() || !app.resource_templates().is_empty()
}

/// Whether `subscriptions/listen` is served: the app reports changes to some of its resources
/// (discover then says `resources.subscribe`).
#[cfg(feature = "resources")]
pub(super) fn serves_subscriptions<A: App>(app: &A) -> bool {
    serves_resources(app) && app.serves_subscriptions()
}
