/** bare pg's account lookup, by hand (servers/pg-pool.ts): the username index is on the stored `account_username` column (migration 4). */
export const FIND_ACCOUNT = "select doc from documents where tenant = $1 and collection = 'accounts' and account_username = $2 limit 1";
