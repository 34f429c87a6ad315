import { configView } from './config-view.ts';

/**
 * `import config from 'spaceport/config'`: the resolved configuration of the service serving
 * the request (SPEC §3), read-only, without secrets.
 */
export default configView;
