import { defineSettings } from 'spaceport';

/**
 * The sample's settings (SPEC §8.7, §11), set under `sample` in the expert configuration:
 * `{"sample": {"apiKey": "...", "uploadDir": "/srv/uploads"}}`. The key, a secret, may come
 * from the environment instead (`SAMPLE_API_KEY`, which wins).
 */
export default defineSettings({
  apiKey: {
    type: 'string',
    secret: true,
    description: 'the x-api-key partners send to /partner/status; unset, every partner is refused',
  },
  uploadDir: { type: 'string', default: 'uploads', description: 'where /upload saves files; a relative path is under DATA_DIR' },
});
