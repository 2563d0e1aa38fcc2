//! `/api/openapi.json`: the OpenAPI 3.1 description of the HTTP API, generated from the same
//! route table ([`crate::api_v1::ROUTES`]) that builds the router and authorizes its requests,
//! so that it cannot drift from what is served. Hand-written JSON: the table holds everything
//! the document says (methods, paths, parameters, bodies, answers, who may call).

use crate::api_v1::{ApiRoute, Input, Output, Param, PREFIX, ROUTES};
use app::api::Access;
use app::domain::account::ProjectRole;
use serde_json::{json, Map, Value};

/// Where the document is served.
pub const PATH: &str = "/api/openapi.json";

fn schema_of(param: &Param) -> Value {
    json!({ "type": param.kind, "description": param.description })
}

fn path_param(name: &str) -> Value {
    let (kind, description) = match name {
        "project" => ("string", "The project's name"),
        "kind" => (
            "string",
            "What the file is: corpus, claims, run or judgments",
        ),
        "id" => ("integer", "The job's id"),
        "number" => ("integer", "The release's number (1, 2, ...)"),
        _ => ("string", ""),
    };
    let mut schema = json!({ "type": kind });
    if name == "kind" {
        schema["enum"] = json!(["corpus", "claims", "run", "judgments"]);
    }
    json!({
        "name": name,
        "in": "path",
        "required": true,
        "description": description,
        "schema": schema,
    })
}

/// Who may call a route, in words.
fn who(access: Access) -> String {
    match access {
        Access::Public => "Anyone.".to_owned(),
        Access::Role(role) => format!("A user with the {role} role (or above)."),
        Access::Project(ProjectRole::Lead) => {
            "A lead of the project (or an admin); others get 403.".to_owned()
        }
        Access::Project(ProjectRole::Annotator) => {
            "A member of the project (or an admin); others get 403.".to_owned()
        }
    }
}

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } },
    })
}

fn operation(route: &ApiRoute) -> Value {
    let mut parameters: Vec<Value> = route.path_params().into_iter().map(path_param).collect();
    parameters.extend(route.query.iter().map(|p| {
        json!({
            "name": p.name,
            "in": "query",
            "required": p.required,
            "schema": schema_of(p),
        })
    }));
    let mut responses = Map::new();
    match route.output {
        Output::Json(status) => {
            responses.insert(
                status.to_string(),
                json!({
                    "description": "Success",
                    "content": { "application/json": { "schema": { "type": ["object", "array"] } } },
                }),
            );
            if route.operation == "createRelease" {
                responses.insert(
                    "200".into(),
                    json!({
                        "description": "Nothing changed since the latest release, which is answered",
                        "content": { "application/json": { "schema": { "type": "object" } } },
                    }),
                );
            }
        }
        Output::Archive => {
            responses.insert(
                "200".into(),
                json!({
                    "description": "The archive (its SHA-256 is in the release listing)",
                    "content": { "application/gzip": { "schema": { "type": "string", "format": "binary" } } },
                }),
            );
        }
    }
    for (status, description) in [
        ("400", "Invalid input; the message names the field"),
        ("401", "No credential, or an invalid or revoked token"),
        ("403", "The caller's role does not allow this"),
        ("404", "No such project, job or release"),
        ("409", "Conflicts with the current state (a duplicate)"),
        ("500", "A server fault; `reference` is the log's id of it"),
    ] {
        responses.insert(status.into(), error_response(description));
    }
    let mut op = json!({
        "operationId": route.operation,
        "summary": route.summary,
        "description": who(route.access),
        "parameters": parameters,
        "responses": responses,
    });
    match route.input {
        Input::None => {}
        Input::Json(fields) => {
            let properties: Map<String, Value> = fields
                .iter()
                .map(|f| (f.name.to_owned(), schema_of(f)))
                .collect();
            let required: Vec<&str> = fields
                .iter()
                .filter(|f| f.required)
                .map(|f| f.name)
                .collect();
            op["requestBody"] = json!({
                "required": !required.is_empty(),
                "content": { "application/json": { "schema": {
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false,
                } } },
            });
        }
        Input::File => {
            op["requestBody"] = json!({
                "required": true,
                "description": "The file itself (JSON lines, Parquet, TREC, ...; gzip works)",
                "content": { "application/octet-stream": { "schema": { "type": "string", "format": "binary" } } },
            });
        }
    }
    op
}

/// The OpenAPI document of [`ROUTES`].
pub fn document() -> Value {
    let mut paths = Map::new();
    for route in ROUTES {
        let item = paths
            .entry(route.full_path())
            .or_insert_with(|| Value::Object(Map::new()));
        item[route.verb.as_str()] = operation(route);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "claimpool HTTP API",
            "version": "1",
            "description": format!(
                "JSON API for scripts under {PREFIX}. Authenticate with a personal API token \
                 (account page, or `claimpool token create`): `Authorization: Bearer cp_...`. \
                 A token acts with its user's account and project roles."
            ),
        },
        "paths": paths,
        "security": [{ "bearerToken": [] }],
        "components": {
            "securitySchemes": {
                "bearerToken": { "type": "http", "scheme": "bearer", "description": "A personal API token, cp_..." },
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error", "status"],
                    "properties": {
                        "error": { "type": "string" },
                        "status": { "type": "integer" },
                        "reference": { "type": "string", "description": "500 only: the server log's id of the fault" },
                    },
                },
            },
        },
    })
}
