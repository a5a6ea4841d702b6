// Resolve hook used only for @heroku/mcp-server@1.2.8, whose published dist
// imports '@modelcontextprotocol/sdk/server/mcp' without the '.js' extension
// (fails under Node's ESM resolver). Retries such specifiers with '.js'.
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(`
export async function resolve(specifier, context, next) {
  try { return await next(specifier, context); }
  catch (e) {
    if (specifier.startsWith('@modelcontextprotocol/sdk/') && !specifier.endsWith('.js')) {
      return next(specifier + '.js', context);
    }
    throw e;
  }
}`));
