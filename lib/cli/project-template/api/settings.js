import { defineSettings } from 'spaceport';

/**
 * Set under "__project__" in the expert configuration (config/expert.json):
 * `{"__project__": {"greeting": "welcome"}}`. A secret may come from the environment instead,
 * which wins: `__PROJECT___API_KEY`.
 */
export default defineSettings({
  apiKey: { type: 'string', secret: true, description: 'the x-api-key partners send; unset, every partner is refused' },
  greeting: { type: 'string', default: 'hello', description: 'what /partner/status says' },
});
