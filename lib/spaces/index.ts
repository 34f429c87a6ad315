export { spacesArea } from './routes.ts';
export { spaceAccessOf, type SpaceAccess, type NameGrant, type AccountPermissions } from './access.ts';
export { isSpaceName, createSpaceBody, replaceSpaceBody, type SpaceDraft } from './validation.ts';
export type { Space } from './store.ts';
export { startTrashSweeper, type TrashSweeper } from './trash-sweeper.ts';
