/**
 * What route files import as `spaceport` (SPEC §8.5), wherever their project folder is:
 *
 * ```js
 * import { db, signToken, verifyToken, config, defineRoutes, defineSettings } from 'spaceport';
 * ```
 */
export {
  db,
  type DocumentStore,
  type TransactionStore,
  type Document,
  type Filter,
  type UpdateSpec,
  type UpdateOptions,
  type UpdateResult,
  type FindOptions,
  type FindOneOptions,
  type FindOneAndUpdateOptions,
} from '../documents/index.ts';
export { signToken, verifyToken, type TokenClaims, type TokenSubject } from './tokens.ts';
export { configView as config } from './config-view.ts';
export { defineRoutes, type Route, type RouteSchema, type SecurityScheme, type JsonSchema, type ValidatorSchema, type RouteHandler, type Middleware, type Request, type Response, type NextFunction, type UploadedFile } from './routes.ts';
export {
  defineSettings,
  type ProjectSettings,
  type SettingDeclaration,
  type SettingDeclarations,
  type SettingType,
  type SettingValue,
  type SettingValues,
} from './settings.ts';
