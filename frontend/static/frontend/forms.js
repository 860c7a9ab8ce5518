/*
 * The server-rendered pages whose only script is this one (deployments, fingerprints, endpoints, API keys): a form
 * with data-confirm asks before it is sent.
 */
import { bindConfirms } from "./common.js";

bindConfirms(document);
